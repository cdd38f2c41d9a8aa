"""Topology comparison reports: findings, tables, figures, assumptions; HTML, Markdown, CSV.

:func:`build_report` computes everything from the public APIs (metrics,
routing and latency, collectives, failures) for a list of systems;
:func:`write_report` writes it to a directory:

* ``index.html``: one self-contained page (figures inline as SVG, CSS inline, no
  network access), readable on a screen and printable;
* ``report.md``: the same content, figures linked;
* ``<table>.csv``: every table, tidy (one row per system x ...), SI units named
  in the column names;
* ``figures/<name>.{pdf,svg,png}``: every figure, saved reproducibly.

The report is written to a temporary directory beside the target and moved
into place at the end, so a failure leaves nothing half-written; an existing
report is only replaced with ``force=True``. Output is deterministic: no dates,
fixed ordering, reproducible figure bytes.

This module holds the entry points; the work is in ``_report_parts`` (the
dataclasses, shared settings and formatting), ``_report_sections`` (structure,
latency, all-to-all, failures, topology, assumptions), ``_report_sweeps``
(collectives, symmetric memory), ``_report_decode``, ``_report_findings`` (the
sentences), ``_report_overview`` (the first paragraphs: what was compared, under which
runtime, the answer head to head) and ``_report_render`` (HTML, Markdown, CSV, figures).

Examples
--------
>>> r = build_report(["torus:3x3x3", "fattree:k=4"], sections=("structure",), quiet=True)
>>> [s.title for s in r.sections]
['Structure', 'Assumptions']
>>> r.findings[0].startswith("torus:3x3x3 reaches")
True
"""

import os
import shutil
import tempfile
from pathlib import Path

from fabric import SpecError
from fabric._system import file_name
from fabric._units import flag_of, kind_error, sequence_of, show_value, text_of, unknown_fault

from ._report_decode import decode_section
from ._report_fair import (
    assumption_clause,
    chip_section,
    cost_section,
    fair_section,
    sensitivity_section,
)
from ._report_overview import overview
from ._report_parts import Report, report_fabric
from ._report_render import (
    FigureDrawing,
    csv_text,
    render_figures,
    render_html,
    render_markdown,
)
from ._report_scaling import scaling_report_section
from ._report_sections import (
    REPORT_RUNTIMES,
    assumptions_section,
    failure_section,
    latency_section,
    structure_section,
    topology_section,
    utilization_section,
)
from ._report_serving import serving_section
from ._report_sweeps import (
    DEFAULT_OPS,
    DEFAULT_SIZES,
    check_ops,
    collectives_section,
)
from ._sizes import parse_sizes
from ._style import FIGURE_FORMATS

__all__ = [
    "DEFAULT_OPS",
    "DEFAULT_SIZES",
    "DEFAULT_SYSTEMS",
    "README_FIGURES",
    "SECTIONS",
    "Report",
    "build_report",
    "check_report_dir",
    "parse_sizes",
    "write_figures",
    "write_report",
]


#: The embedded default comparison: the seed supernode against a cluster of the same
#: size, with a one-tier switched rack and a torus cube alongside, every one with the
#: same chip (the H100 of cluster-128) so that the comparison is of fabrics; the
#: ``chips`` section runs the presets with their own chips.
DEFAULT_SYSTEMS = ("sd200-ultra:chip=h100", "cluster-128", "nvl72:chip=h100",
                   "tpu-v4-cube:chip=h100")

#: Report sections in the order they appear (the assumptions table always closes it): what
#: the systems are and how they perform (latency, collectives, all-to-all, decode, serving),
#: then what they cost and how the comparison holds at equal cost, under other assumptions
#: and after a failure (each of these uses the quantities the first part introduces), then
#: the scaling study, the drawings and the chip comparison.
SECTIONS = ("structure", "latency", "collectives", "symmetric", "utilization", "decode",
            "serving", "cost", "fair", "sensitivity", "failures", "scaling", "topology",
            "chips")

#: The figures ``cofabric figures`` regenerates for the README: figures of the report of
#: the default systems with the all-reduce sweep (``cofabric report --ops all-reduce``).
README_FIGURES = ("topology-sd200-ultra", "topology-cluster-128", "latency",
                  "collective-all-reduce", "symmetric-memory", "link-utilization")

#: Sections that quote times under a software runtime (NCCL, symmetric-memory kernels).
_RUNTIME_SECTIONS = {"collectives", "fair", "sensitivity", "scaling", "decode", "serving",
                     "chips"}

_README_SECTIONS = ("latency", "collectives", "symmetric", "utilization", "topology")


# -- building ---------------------------------------------------------------------------


def _build_fabrics(systems):
    from fabric._units import sequence_of

    if isinstance(systems, str):
        systems = [systems]
    # a sequence (a set's order is its hashes': the report's order would follow them), each
    # item checked before the set of them (a list in it is unhashable)
    systems = sequence_of(systems, "systems", "preset names or spec strings")
    for name in systems:
        if not isinstance(name, str):
            raise kind_error(name, "a system", "a preset name or spec string")
    if not systems:
        raise SpecError("systems: name at least one system")
    if len(set(systems)) != len(systems):
        raise SpecError(f"systems must be distinct, got {show_value(systems)}")
    return {name: report_fabric(name) for name in systems}


def build_report(systems=DEFAULT_SYSTEMS, *, sizes=None, ops=None, sections=SECTIONS,
                 executor=None, quiet=False, command=None, on_section=None):
    """Compute a comparison report of ``systems``.

    Parameters
    ----------
    systems : sequence of str
        Preset names or spec strings (``topologies.build`` accepts them); the
        first two are compared head to head in the findings, the rest alongside.
    sizes : sequence of int or str, optional
        Collective sizes per rank (nccl-tests convention), sizes or ranges as
        :func:`parse_sizes` reads them. Default :data:`DEFAULT_SIZES` (1 KiB-1 GiB).
    ops : sequence of str, optional
        Collective operations. Default :data:`DEFAULT_OPS`.
    sections : sequence of str
        Which of :data:`SECTIONS` to include (the assumptions always are;
        ``"symmetric"`` comes with ``"collectives"``).
    executor : concurrent.futures.Executor, optional
        Runs the collective sweep (see :func:`analysis.sweep`); results are the same.
    quiet : bool
        No progress bar.
    command : str, optional
        The command line shown as how to reproduce the report.
    on_section : callable, optional
        Called with each :class:`Section` as soon as it is built, in report order
        (``cofabric report`` starts drawing its figures then:
        :class:`analysis._report_render.FigureDrawing`).

    Returns
    -------
    Report

    Raises
    ------
    fabric.SpecError
        For a system no builder knows, or an unknown operation.
    ValueError
        For an unknown section, no systems, or a size that does not parse.
    TypeError
        ``systems`` or ``sections`` not a sequence (a set: its order is its hashes'; one
        section's name), an item that is not a str; a ``command`` that is not a str, an
        ``on_section`` that is not callable.

    Examples
    --------
    >>> r = build_report(("torus:2x2", "mesh:4"), sections=("structure",), quiet=True)
    >>> [s.key for s in r.sections], [t.name for t in r.sections[0].tables]   # + what it assumes
    (['structure', 'assumptions'], ['summary'])
    >>> r.findings[0].split(";")[0]
    'torus:2x2 reaches any chip from any other in at most 2 hops (1.33 on average)'
    """
    from fabric._units import sequence_of, text_of

    sections = [text_of(s, f"sections[{i}]")      # not 'structure' read letter by letter
                for i, s in enumerate(sequence_of(sections, "sections", "section names"))]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise SpecError(unknown_fault(unknown, "report section(s)", SECTIONS))
    # before any section is computed (minutes for the default): a command of another kind
    # was written as its repr, 5 failing only in write_report ("'int' object has no
    # attribute 'replace'"); on_section=5 "'int' object is not callable" after a section
    command = text_of(command, "command", optional=True)
    if on_section is not None and not callable(on_section):
        raise kind_error(on_section, "on_section", "a callable (called with each Section) "
                         "or None")
    sizes = parse_sizes(DEFAULT_SIZES if sizes is None else sizes)
    ops = check_ops(DEFAULT_OPS if ops is None else ops)
    fabrics = _build_fabrics(systems)
    builders = {"structure": structure_section, "latency": latency_section,
                "utilization": utilization_section, "failures": failure_section,
                "topology": topology_section, "cost": cost_section}
    parts, groups = [], []

    def add(section):
        parts.append(section)
        if on_section is not None:
            on_section(section)

    titles = {"structure": "Structure", "latency": "Access latency",
              "collectives": "Collectives", "symmetric": "Symmetric memory",
              "decode": "MoE decode", "serving": "Serving", "utilization": "All-to-all",
              "failures": "Failures", "topology": "Topology", "cost": "Cost and power",
              "fair": "Equal chip, cost and power", "chips": "Chips (not fabrics)",
              "sensitivity": "Sensitivity", "scaling": "Scaling"}

    def found(key, sentences):
        if sentences:
            # a finding says what it assumes (older sections' sentences do not by themselves)
            groups.append((titles[key], tuple(
                s if "Assumes" in s or "assumption" in s
                else s + assumption_clause(key, fabrics, s) for s in sentences)))

    # No progress bar of its own: the long stages (sweeps, figures) draw theirs, and two
    # bars on one terminal line would overwrite each other.
    for key in (s for s in SECTIONS if s in sections and s != "symmetric"):
        if key == "collectives":
            section, sentences, (sym, sym_sentences) = collectives_section(
                fabrics, ops, sizes, executor, quiet)
            add(section)
            found(key, sentences)
            if "symmetric" in sections:
                if sym is not None:
                    add(sym)
                found("symmetric", sym_sentences)
        elif key in ("fair", "chips", "sensitivity"):
            if key == "fair":
                section, sentences = fair_section(fabrics, executor, quiet)
            elif key == "sensitivity":
                section, sentences = sensitivity_section(fabrics, executor, quiet)
            else:
                section, sentences = chip_section(_own_chip_systems(fabrics), executor,
                                                   quiet)
            if section is not None:
                add(section)
            found(key, sentences)
        elif key == "scaling":
            # the families at growing size: independent of the systems compared
            section, sentences = scaling_report_section(executor, quiet)
            add(section)
            found(key, sentences)
        elif key == "decode":
            section, sentences = decode_section(fabrics, executor, quiet)
            if section is not None:
                add(section)
                found(key, sentences)
            elif sentences:     # no step ran: nothing to assume
                groups.append((titles[key], tuple(sentences)))
        elif key == "serving":
            section, sentences = serving_section(fabrics, executor, quiet)
            if section is not None:
                add(section)
            found(key, sentences)
        else:
            section, sentences = builders[key](fabrics)
            add(section)
            found(key, sentences)
    used = [sp for section in parts for sp in section.parameters]
    # the runtimes' constants where a section quotes times under them
    runtimes = REPORT_RUNTIMES if set(sections) & _RUNTIME_SECTIONS else ()
    assumptions, _ = assumptions_section(fabrics, used, runtimes)
    add(assumptions)
    if command is None:
        command = "cofabric report " + " ".join(fabrics)
    return Report(systems=tuple(fabrics), finding_groups=tuple(groups), sections=tuple(parts),
                  command=command, overview=overview(fabrics, parts))


def _own_chip_systems(fabrics):
    """The systems with their own chips: ``"<preset>:chip=..."`` becomes the preset."""
    import topologies

    out = []
    for name in fabrics:
        base = name.partition(":")[0].strip().lower()
        out.append(base if base in topologies.PRESETS else name)
    return out if out != list(fabrics) else []


# -- writing ----------------------------------------------------------------------------


def _named(flags):
    """How a message names the output directory's argument and gives an example of it: the
    command's flag (``--out report``) for the CLI, the keyword (``out='report'``) for a
    library caller, who passed no ``--out``."""
    if flags:
        return "--out", lambda example: f"--out {example}"
    return "out", lambda example: f"out={example!r}"


def output_dir(out, example, *, parents=False, whole=False, flags=False):
    """An output directory's name as a :class:`~pathlib.Path`, refused before any work when
    no directory can be written there: empty (:class:`~fabric.SpecError`, naming
    ``out='example'``, or ``--out example`` with ``flags``: the CLI's spelling), holding a
    NUL character, which no file name can (``SpecError``; the
    operating system's call would raise ValueError, an internal error), an existing file or
    a path through one (:class:`FileExistsError`), a missing parent
    (:class:`FileNotFoundError`; with ``parents``, the command makes the missing
    directories: the nearest existing one is asked instead), or a directory where no directory
    can be made (:class:`PermissionError`, or the error of a probe directory made and removed:
    ``os.access`` says yes to root, and on /proc). The directory asked is the one the command
    writes into: ``out`` where it exists, unless the command replaces it ``whole`` (the
    report: then its parent). One rule for ``cofabric report``, ``figures`` and ``scaling``.

    >>> output_dir("a\\x00b", "report")
    Traceback (most recent call last):
    ...
    fabric.SpecError: out 'a\\x00b': no file is named with a NUL character
    >>> output_dir("", "report", flags=True)
    Traceback (most recent call last):
    ...
    fabric.SpecError: --out is empty: name the directory to write, e.g. --out report
    >>> output_dir("/no/such/dir/figures", "figures")
    Traceback (most recent call last):
    ...
    FileNotFoundError: cannot write the figures to /no/such/dir/figures: /no/such/dir does not exist
    """
    name, given = _named(flags)
    text = str(out)
    if not text.strip():
        raise SpecError(f"{name} is empty: name the directory to write, e.g. {given(example)}")
    out = Path(file_name(out, name))
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{name} {out} exists and is not a directory")
    place = out.resolve() if out.is_dir() and not whole else out.resolve().parent
    top = place                     # the nearest directory or file that exists
    while not top.exists() and top != top.parent:
        top = top.parent
    cannot = f"cannot write the {example} to {out}:"
    if top.exists() and not top.is_dir():
        raise FileExistsError(f"{cannot} {top} is a file, not a directory")
    if not parents and top != place:
        raise FileNotFoundError(f"{cannot} {place} does not exist")
    place = top
    if not os.access(place, os.W_OK | os.X_OK):
        raise PermissionError(f"{cannot} {place} is not writable")
    try:        # as the command will (os.access says yes to root, and on /proc)
        os.rmdir(tempfile.mkdtemp(prefix=f".{out.name}.probe-", dir=place))
    except OSError as e:
        raise type(e)(f"{cannot} making a directory in {place} failed ({e.strerror})") from None
    return out


def check_report_dir(out, force=False):
    """Check that a report can be written to ``out``; return it as a Path.

    Call it before a long computation to fail early; :func:`write_report` calls
    it again.

    Parameters
    ----------
    out : str, bytes or os.PathLike
        The report's directory.
    force : bool
        Replace a non-empty directory.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileExistsError
        If ``out`` is a file, or a non-empty directory and ``force`` is false.
    FileNotFoundError, PermissionError
        If the parent of ``out`` is missing or not writable.
    SpecError
        If ``out`` is empty or holds a NUL (:func:`output_dir`), or is the current directory
        or one holding it (the report replaces its directory whole).
    TypeError
        If ``force`` is not True or False (``'no'`` is not read by its truth).

    Examples
    --------
    >>> check_report_dir("/no/such/dir/report")
    Traceback (most recent call last):
    ...
    FileNotFoundError: cannot write the report to /no/such/dir/report: /no/such/dir does not exist
    """
    return report_dir(out, force)


def report_dir(out, force, *, flags=False):
    """:func:`check_report_dir`'s rule; ``flags``: its messages name ``cofabric report``'s
    ``--out`` and ``--force`` (the CLI asks so), not the arguments ``out`` and ``force``."""
    force = flag_of(force, "force")
    out = output_dir(out, "report", whole=True, flags=flags)
    here = Path.cwd().resolve()
    if out.resolve() == here or out.resolve() in here.parents:
        # the report replaces its directory whole, and the one a shell stands in cannot be
        raise SpecError(f"cannot write the report to {out}: it is the current directory or "
                        f"holds it; name a directory inside it, e.g. {_named(flags)[1]('report')}")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise FileExistsError(f"{out} already holds files; pass "
                              f"{'--force' if flags else 'force=True'} to replace it")
    return out


def _replace_dir(tmp, out):
    """Move the finished ``tmp`` to ``out``, replacing what was there, never half-way."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.resolve().parent))
        try:
            os.rename(out, old / out.name)
        except OSError:
            old.rmdir()       # leave nothing behind
            raise
    try:
        os.rename(tmp, out)
    except OSError:
        if old is not None:  # put the old report back
            os.rename(old / out.name, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_report(report, out="report", *, force=False, quiet=False, executor=None,
                 drawing=None):
    """Write ``report`` to the directory ``out``; return the path of its ``index.html``.

    Parameters
    ----------
    report : Report
    out : str or os.PathLike
        The directory to create. An existing non-empty directory is only replaced
        with ``force=True``.
    force : bool
    quiet : bool
        No progress bar.
    executor : concurrent.futures.Executor, optional
        Draws the figures in parallel; the files are the same.
    drawing : analysis._report_render.FigureDrawing, optional
        The figures, already drawing since their sections were built (``cofabric
        report``); the files are the same.

    Raises
    ------
    FileExistsError
        If ``out`` holds files and ``force`` is false, or is a file.
    PermissionError, FileNotFoundError
        If ``out``'s parent is not a writable directory.
    TypeError
        A ``report`` that is not a Report, a ``drawing`` that is not a FigureDrawing, a
        flag that is not a bool.

    Examples
    --------
    >>> import tempfile
    >>> r = build_report(["torus:4x4"], sections=("structure",), quiet=True)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     index = write_report(r, Path(d) / "report", quiet=True)
    ...     sorted(p.name for p in index.parent.iterdir())
    ['assumptions.csv', 'figures', 'index.html', 'report.md', 'summary.csv']
    """
    # a report or drawing of another kind was an AttributeError ('figures', 'finish')
    if not isinstance(report, Report):
        raise kind_error(report, "report", "a Report (analysis.build_report's)")
    if drawing is not None and not isinstance(drawing, FigureDrawing):
        raise kind_error(drawing, "drawing",
                         "an analysis._report_render.FigureDrawing or None")
    out = check_report_dir(out, force)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.resolve().parent))
    except OSError as e:    # name the directory asked for, not the temporary one beside it
        raise OSError(e.errno, e.strerror, str(out)) from None
    try:
        if drawing is not None:
            svgs = drawing.finish(report.figures, tmp / "figures", report.systems, quiet=quiet)
        else:
            svgs = render_figures(report.figures, tmp / "figures", quiet=quiet,
                                   executor=executor, systems=report.systems)
        for table in report.tables:
            (tmp / f"{table.name}.csv").write_text(csv_text(table), encoding="utf-8")
        (tmp / "index.html").write_text(render_html(report, svgs), encoding="utf-8")
        (tmp / "report.md").write_text(render_markdown(report), encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a report is for reading
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out / "index.html"


def write_figures(out="figures", names=README_FIGURES, *, quiet=False, executor=None):
    """Regenerate the figures the README shows into ``out``; return the files written.

    They are figures of the default systems' report with the all-reduce sweep
    (``cofabric report --ops all-reduce``); the same inputs give the same bytes.

    Parameters
    ----------
    out : str or os.PathLike
        Directory (created if missing; its parent must exist); existing files of
        these names are replaced.
    names : sequence of str
        Which figures, of :data:`README_FIGURES` (its default).
    quiet : bool
    executor : concurrent.futures.Executor, optional
        Draws the figures in parallel.

    Raises
    ------
    ValueError
        If a name is not one of :data:`README_FIGURES` (a :class:`~fabric.SpecError`, before
        any work).
    TypeError
        If ``names`` is not a sequence of str (one name given bare, ``None``, a set).
    FileExistsError, FileNotFoundError, PermissionError
        If ``out`` is a file, its parent is missing or a file, or no directory can be made
        there (:func:`output_dir`, before any work).

    Examples
    --------
    ``write_figures("figures")`` redraws the README's six figures (tens of seconds: the report
    of the default systems). A place it cannot write is refused before any of that work:

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_figures(pathlib.Path(folder, "no", "such"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: cannot write the figures to .../no/such: .../no does not exist
    """
    names = [text_of(n, "each figure name") for n in sequence_of(names, "names", "figure names")]
    unknown = [n for n in names if n not in README_FIGURES]
    if unknown:     # before the report is built, not after
        raise SpecError(unknown_fault(unknown, "figure(s)", README_FIGURES))
    out = output_dir(out, "figures")
    report = build_report(DEFAULT_SYSTEMS, ops=("all-reduce",), sections=_README_SECTIONS,
                          executor=executor, quiet=quiet, command="cofabric figures")
    known = {f.name: f for f in report.figures}
    out.mkdir(exist_ok=True)
    render_figures([known[n] for n in names], out, quiet=quiet, executor=executor,
                    systems=report.systems)
    return [out / f"{n}.{x}" for n in names for x in FIGURE_FORMATS]
