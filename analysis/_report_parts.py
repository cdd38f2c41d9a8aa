"""The parts of a report and what its sections, findings and rendering share.

The dataclasses a :class:`Report` is made of (tables, figures, sections); the seed
article's claims and the decode conditions that both the sections and the findings
state; number formatting; one Fabric per system name and process. The public names
are re-exported by :mod:`analysis._report`.
"""

import dataclasses
import functools
import math
import re

from fabric import format_bandwidth, format_size, format_time
from fabric._units import SHOWN_SIGNIFICANT, is_float, is_real

__all__ = []


# -- the report's parts -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Column:
    """A table column: ``key`` in the rows (and the CSV header), a label, a display format."""

    key: str
    label: str
    fmt: object = str


@dataclasses.dataclass(frozen=True)
class Table:
    """A table: rows are dicts of SI values; ``columns`` say how to show them.

    The CSV holds ``csv_rows`` under the keys ``csv_columns`` where given (a tidy
    form of a table shown merged or pivoted), else every field of the shown rows.
    """

    name: str
    title: str
    columns: tuple
    rows: tuple
    caption: str = ""
    csv_columns: tuple = None
    csv_rows: tuple = None


@dataclasses.dataclass(frozen=True)
class FigureSpec:
    """A figure: ``draw()`` returns a matplotlib Figure (called inside the paper style)."""

    name: str
    title: str
    caption: str
    draw: object
    column: str = "single"
    height: float = None


@dataclasses.dataclass(frozen=True)
class Section:
    """A titled part of the report: paragraphs, tables and figures."""

    key: str
    title: str
    text: tuple = ()
    tables: tuple = ()
    figures: tuple = ()
    parameters: tuple = ()  # (system, fabric.Parameter) used beyond the fabric's own


@dataclasses.dataclass(frozen=True)
class Report:
    """Everything a report shows, computed; :func:`write_report` renders it.

    Attributes
    ----------
    systems : tuple of str
        The system names (spec strings or presets), in the order compared.
    finding_groups : tuple of (str, tuple of str)
        Sentences stating what the numbers say, generated from them, grouped by topic.
    sections : tuple of Section
    command : str
        The command line that reproduces the report.
    overview : tuple of str
        The first paragraphs ("In short"): what was compared, under which runtime, and the
        answer head to head, read from the sections' tables.
    """

    systems: tuple
    finding_groups: tuple
    sections: tuple
    command: str
    overview: tuple = ()

    @property
    def findings(self):
        """Every finding sentence, in order."""
        return tuple(f for _, group in self.finding_groups for f in group)

    @property
    def tables(self):
        """Every table, in order of appearance."""
        return tuple(t for s in self.sections for t in s.tables)

    @property
    def figures(self):
        """Every figure, in order of appearance."""
        return tuple(f for s in self.sections for f in s.figures)


# -- the seed's claims and the decode conditions ----------------------------------------

#: The seed article's claim: symmetric memory cut collective time 3.5x (unconfirmed).
SEED_SYMMETRIC_CLAIM = 3.5

#: Models the decode section runs: a published config and the seed's scale (hypothetical).
DECODE_MODELS = ("kimi-k2", "hypothetical-2.8t")

#: Decode conditions: one sequence (the latency-bound case the seed's 5.85 ms refers to)
#: with a 4096-token KV cache, the decode model's documented defaults otherwise.
DECODE_BATCH, DECODE_CONTEXT = 1, 4096

#: The seed article's claim for its 2.8T MoE on the 128-chip supernode (unconfirmed).
SEED_MS_PER_TOKEN = 5.85e-3
#: The claim as the report writes it: its own digits, the format helpers' unit ('5.85ms').
SEED_TPOT_TEXT = format_time(SEED_MS_PER_TOKEN)

#: Kernel fusion factors the seed's claims are read at: none, and its "10x fewer kernels"
#: (unconfirmed); the decode tornado's low and high setting.
SEED_FUSION = (1.0, 10.0)


# -- formatting -------------------------------------------------------------------------

#: A time or bandwidth the model computes, wherever the report shows it (a table's column,
#: a sentence, a value alone): four significant digits, trailing zeros kept, so one value
#: reads the same in the prose and in the tables (``450.0GB/s`` both; ``1.400ms`` beside
#: ``2.977ms``) and ``450.0GB/s`` is not taken for a rounded 'about 450'. A sourced
#: parameter and a quoted claim keep their own digits, the helpers' default (the seed's
#: ``5.85ms``, ``1.3us`` per kernel boundary): their sources give no more. One spelling of
#: every unit, the helpers' (no space: ``5.85ms``).
computed_time = functools.partial(format_time, all_digits=True)
computed_bandwidth = functools.partial(format_bandwidth, all_digits=True)


def shown_parts(parts):
    """The ``(name, seconds)`` parts of a whole that the whole's four shown digits can see:
    a part below half a unit of the whole's fourth significant digit is left out, as is a
    part of zero. Such a part is a float residue of a subtraction (4.3e-19 s of an 8 ms
    token), printed as noise ('4.337e-10ns') beside parts that add up to the whole.

    >>> shown_parts([("a", 8e-3), ("b", 4.3e-19), ("c", 0.0), ("d", 2e-6)])
    [('a', 0.008), ('d', 2e-06)]
    """
    parts = list(parts)
    total = sum(v for _, v in parts)
    if not total > 0:
        return []
    half_unit = 0.5 * 10 ** (math.floor(math.log10(total)) - (SHOWN_SIGNIFICANT - 1))
    return [(n, v) for n, v in parts if v >= half_unit]


def fmt_float(digits=3):
    """A float (numpy's too: :func:`fabric._units.is_float`) to ``digits`` significant digits
    with its trailing zeros, so a column shows one precision (92.0 beside 91.2, 1.0 beside
    0.73); anything else as ``str``.

    >>> [fmt_float(3)(v) for v in (91.2, 92.0, 2.0, 0.18, 5.54)], fmt_float(2)(1.0), fmt_float()(7)
    (['91.2', '92.0', '2.00', '0.180', '5.54'], '1.0', '7')
    >>> import numpy as np
    >>> fmt_float(3)(np.float32(0.18))
    '0.180'
    """
    return lambda v: f"{float(v):#.{digits}g}".rstrip(".") if is_float(v) else str(v)


def fmt_value(value, unit):
    """A parameter value in human units (the CSV keeps SI)."""
    if not is_real(value):
        return str(value)
    if unit == "B/s":
        return format_bandwidth(value)
    if unit == "s":
        return format_time(value)
    if unit == "B":              # exact where it can be: 4096 B (a page) 4KiB, 80e9 B 80GB
        return format_size(value)
    if unit in ("FLOP/s", "OP/s"):   # INT8 peaks are OP/s: '1.979e+15 OP/s' read badly
        return f"{value / 1e12:.4g} T{unit}"
    if unit == "USD" and abs(value) >= 100:
        return f"{'-' if value < 0 else ''}${abs(value):,.0f}"
    text = _plain(float(value)) if is_float(value) else str(value)
    # every other unit said after the value (W, m, USD/(Gb/s), Gb/s...): a bare number
    # in the assumptions table was ambiguous
    return f"{text} {unit}" if unit and unit not in ("", "1", "count") else text


def _plain(v):
    """Four significant digits without an exponent where that reads better
    (``51,200``, ``0.009766``; ``5.12e+04`` was not); exponents outside 1e-3..1e9."""
    if v == 0 or not math.isfinite(v) or not 1e-3 <= abs(v) < 1e9:
        return f"{v:.4g}"
    decimals = max(0, 3 - math.floor(math.log10(abs(v))))
    text = f"{round(v, decimals):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_optional(v):
    """``v`` as text, ``-`` where it is None (a number that does not apply)."""
    return "-" if v is None else str(v)


def _ratio(a, b):
    return a / b if b else float("inf")


def times_text(a, b):
    """The ratio a / b as '1.02x', '2.6x' or '12x' (both positive)."""
    r = _ratio(a, b)
    if r < 2:
        return f"{r:.2f}x"
    return f"{r:.1f}x" if r < 10 else f"{r:.0f}x"


def ratio_text(v, digits=3):
    """A ratio to ``digits`` significant digits, trailing zeros kept so that every ratio of
    a column or a sentence shows the same precision ('1.00x' beside '1.24x', not '1x').

    >>> [ratio_text(v) for v in (0.996, 1.24, 10.8, 56.94, 0.00342, 1234.0)]
    ['0.996x', '1.24x', '10.8x', '56.9x', '0.00342x', '1234x']
    >>> ratio_text(0.996, 2), ratio_text(1.98, 2)
    ('1.0x', '2.0x')
    """
    text = f"{v:#.{digits}g}"
    if "e" in text or len(text.rstrip(".").split(".")[0].lstrip("-")) >= digits:
        return f"{v:.0f}x"                    # as many integer digits as asked, or more
    return text.rstrip(".") + "x"


def slug(name):
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")


# -- the collectives runtime a table or figure uses (issue 10) ---------------------------


def default_runtime():
    """The runtime :func:`analysis.cost` uses when none is given
    (:func:`analysis._collectives.default_runtime`)."""
    from ._collectives import default_runtime as of_cost

    return of_cost()


def runtime_phrase(name=None):
    """How the report names a collectives runtime in a caption or a finding: the runtime's
    name as ``analysis.cost`` takes it and what it charges. ``None``: analysis.cost's
    default runtime (:func:`default_runtime`).

    >>> runtime_phrase("ideal")[:59], runtime_phrase("ideal").endswith("not a lower bound")
    ("runtime 'ideal': the model's own schedules with no launch, ", True)
    >>> runtime_phrase("nccl").startswith("runtime 'nccl': NCCL 2.")
    True
    """
    from fabric import runtime as get_runtime

    name = default_runtime() if name is None else name
    if name == "ideal":
        # not a bound: NCCL's pipelined trees can beat the model's schedules; the bound is
        # CollectiveCost.lower_bound (lead 05:34, review S13-R4)
        return ("runtime 'ideal': the model's own schedules with no launch, synchronisation "
                "or protocol costs, not a lower bound")
    if name == "nccl":
        return (f"runtime 'nccl': NCCL {get_runtime('nccl').version}'s tuner, its launch, "
                "protocol and per-step costs")
    return f"runtime {name!r}"


#: What a caption says where its times or rates are no collective's, so that every figure and
#: table names its runtime or says that none applies (issue 10): a 64 B load or store (the
#: transport's own costs), routed link loads (a flow: bytes over the busiest link's bandwidth).
NO_RUNTIME = "no collective runtime"


def runtime_label(name=None):
    """A runtime named in a few words, for a figure's panel title or axis label (a figure
    used outside the report must say what its times include; :func:`runtime_phrase` is the
    caption's longer form). ``None``: analysis.cost's default runtime.

    >>> runtime_label("ideal")
    "model's schedules, no software costs"
    >>> runtime_label("nccl").startswith("NCCL 2.")
    True
    """
    from fabric import runtime as get_runtime

    name = default_runtime() if name is None else name
    if name == "ideal":
        # what the times are, not a bound: NCCL's pipelined trees can come out below them
        # (cluster-128, 1 GiB all-reduce); the bound is CollectiveCost.lower_bound
        return "model's schedules, no software costs"
    if name == "nccl":
        return f"NCCL {get_runtime('nccl').version} model"
    return f"runtime {name!r}"


# -- fabrics and figures ----------------------------------------------------------------


@functools.cache
def report_fabric(name):
    # One Fabric per name and process: its router and collective plans are cached on it.
    import topologies

    return topologies.build(name)


def loadstore_everywhere(f):
    """Whether load/store reaches every chip from every other: the fabric's one rule
    (:func:`fabric.loadstore_domains`: no NIC, no message-only link on the way)."""
    d = f.loadstore_domains[f.endpoint_indices]
    return bool((d == d[0]).all())


def new_figure():
    # A bare Figure, not pyplot: no backend, no global figure registry, nothing to close,
    # so report figures neither need a display nor touch a user's interactive session.
    from matplotlib.figure import Figure

    return Figure()


def integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)
