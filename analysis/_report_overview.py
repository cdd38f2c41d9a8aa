"""The report's first paragraphs ("In short"): what was compared, under which runtime, and
the answer head to head, read from the sections' own tables.

No number of its own: every value is a cell of a table the report shows further down
(summary, fair, decode_best, cost), in the same spelling, so that the first screen and the
section a reader jumps to agree. A table a report left out (``sections=``) leaves its
clause out.
"""

from fabric._units import name_list

from ._report_parts import (
    NO_RUNTIME,
    computed_bandwidth,
    computed_time,
    runtime_phrase,
    times_text,
)

__all__ = []

#: The sections whose times are of collectives under the model's schedules with no
#: software costs, and those that price no collective at all (their captions say so too).
_IDEAL_SECTIONS = {"collectives": "the collectives section's sweep",
                   "symmetric": "the first symmetric-memory table (its figure's left panel)",
                   "scaling": "the scaling study's collectives"}
_NO_RUNTIME_SECTIONS = {"latency": "access latency", "utilization": "all-to-all",
                        "failures": "failures"}
#: Sections whose times are under analysis.cost's default runtime.
_DEFAULT_RUNTIME_SECTIONS = {"symmetric", "fair", "sensitivity", "decode", "serving",
                             "scaling", "chips"}


def _chip_name(f):
    return getattr(f.chip, "name", None)


def _compared(fabrics, keys):
    names = list(fabrics)
    chips = {n: f.n_endpoints for n, f in fabrics.items()}
    one = [f"{n} ({chips[n]:,} chips)" for n in names]
    if len(one) == 1:
        text = f"One system: {one[0]}"
    else:
        text = f"Compared: {one[0]} against {one[1]}"
        if len(one) > 2:
            text += f", with {name_list(one[2:], most=None)} alongside"
    kinds = {_chip_name(f) for f in fabrics.values()}
    if len(fabrics) > 1 and len(kinds) == 1 and None not in kinds:
        text += (f"; every system carries the same chip ({kinds.pop()}), so the differences "
                 "come from the fabric")
        if "chips" in keys:
            text += " (the chip comparison runs each preset with its own chip)"
    elif len(fabrics) > 1 and None not in kinds:
        text += ("; the systems carry different chips ("
                 + ", ".join(f"{n} {_chip_name(f)}" for n, f in fabrics.items())
                 + "), so the differences mix chip and fabric")
    return text + "."


def _named(runtime=None):
    """"runtime 'nccl' (NCCL 2.30.7's tuner, ...)": :func:`runtime_phrase` as a name and a
    parenthesis, to stand inside a sentence."""
    name, _, what = runtime_phrase(runtime).partition(": ")
    return f"{name} ({what})" if what else name


def _runtimes(keys):
    timed = any(k in _DEFAULT_RUNTIME_SECTIONS for k in keys)
    ideal = [v for k, v in _IDEAL_SECTIONS.items() if k in keys]
    none = [v for k, v in _NO_RUNTIME_SECTIONS.items() if k in keys]
    parts = []
    if timed:
        text = f"times of collectives are under the {_named()}"
        if ideal:
            text += (f", except {name_list(ideal, most=None)}, which are under the {_named('ideal')}")
        parts.append(text)
    elif ideal:
        parts.append(f"{name_list(ideal, most=None)} are under the {_named('ideal')}")
    if none:
        parts.append(f"{name_list(none, most=None)} price loads and routed link loads ({NO_RUNTIME})")
    if not parts:
        return ""
    text = "; ".join(parts) + ". Every caption names the runtime its times use."
    return text[0].upper() + text[1:]


def _rows(tables, name, **match):
    t = tables.get(name)
    if t is None:
        return {}
    rows = t.csv_rows if t.csv_rows is not None else t.rows
    return {r["system"]: r for r in rows
            if all(r.get(k) == v for k, v in match.items()) and "system" in r}


def _versus(a, b, value, fmt, higher_is_better, more, less):
    """'3.701ms against 5.764ms (1.56x faster on A)' for systems a, b of value(row)."""
    va, vb = value(a), value(b)
    text = f"{fmt(va)} against {fmt(vb)}"
    if va == vb or not (va > 0 and vb > 0):
        return text
    better = (va > vb) == higher_is_better
    word = more if better else less
    return f"{text} ({times_text(max(va, vb), min(va, vb))} {word})"


#: How close to the best another system must come for the 'Of all' sentence to name it
#: beside the best (a reading threshold for the text, not a model constant).
CLOSE = 0.01


def _answer(names, tables):
    if len(names) < 2:
        return ""
    a, b = names[:2]
    clauses = []
    summary = _rows(tables, "summary")
    if a in summary and b in summary:
        clauses.append(f"at most {summary[a]['diameter_hops']} against "
                       f"{summary[b]['diameter_hops']} hops between chips")
        clauses.append("bisection per chip " + _versus(
            summary[a], summary[b], lambda r: r["bisection_per_chip_Bps"], computed_bandwidth,
            True, "more", "less"))
    fair = _rows(tables, "fair", basis="as built")
    if a in fair and b in fair:
        clauses.append(f"a 1GiB all-reduce under the {runtime_phrase().partition(':')[0]} "
                       "takes " + _versus(fair[a], fair[b], lambda r: r["allreduce_1GiB_s"],
                                 computed_time, False, "faster", "slower"))
    decode = _rows(tables, "decode_best")
    if a in decode and b in decode:
        clauses.append(f"a {decode[a]['model']} decode step (batch 1, each system at its best "
                       f"layout, its collectives under the {runtime_phrase().partition(':')[0]}) "
                       "takes " + _versus(decode[a], decode[b], lambda r: r["time_s"],
                                                  computed_time, False, "faster", "slower"))
    cost = _rows(tables, "cost")
    if a in cost and b in cost:
        clauses.append("network cost per chip " + _versus(
            cost[a], cost[b], lambda r: r["network_cost_usd_per_chip"],
            lambda v: f"${v:,.0f}", False, "cheaper", "dearer"))
    if not clauses:
        return ""
    text = f"Head to head, {a} against {b} (ratios for {a}): " + "; ".join(clauses) + "."
    if len(names) > 2:
        best = []
        for label, rows, value, fmt, pick in (
                ("most bisection per chip", summary, "bisection_per_chip_Bps",
                 computed_bandwidth, max),
                ("fastest 1GiB all-reduce", fair, "allreduce_1GiB_s", computed_time, min),
                ("fastest decode", decode, "time_s", computed_time, min),
                ("cheapest network per chip", cost, "network_cost_usd_per_chip",
                 lambda v: f"${v:,.0f}", min)):
            if all(n in rows for n in names):
                top = pick(names, key=lambda n: rows[n][value])
                v = rows[top][value]
                # a system within 1% of the best is named beside it: the order of two such
                # is not an answer (cluster-128 9.949ms, nvl72 9.962ms)
                close = [f"{n} {fmt(rows[n][value])}" for n in names if n != top
                         and abs(rows[n][value] - v) <= CLOSE * abs(v)]
                best.append(f"{label} {top} ({fmt(v)}"
                            + (f"; {', '.join(close)}, within {CLOSE:.0%})" if close else ")"))
        if best:
            text += f" Of all {len(names)}: " + "; ".join(best) + "."
    return text


def overview(fabrics, parts):
    """The 'In short' paragraphs of a report of ``fabrics`` (name -> Fabric) whose sections
    are ``parts``: what was compared, under which runtime, and the answer head to head."""
    keys = [s.key for s in parts]
    tables = {t.name: t for s in parts for t in s.tables}
    return tuple(p for p in (_compared(fabrics, keys), _runtimes(keys),
                             _answer(list(fabrics), tables)) if p)
