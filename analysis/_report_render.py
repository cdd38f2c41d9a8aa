"""Rendering a report: one self-contained HTML page, Markdown, tidy CSV, the figures.

Every output is deterministic: fixed ordering, exact CSV numbers, figures saved
through :func:`analysis.save_figure`.
"""

import csv
import html
import io
import re
from pathlib import Path

from fabric._units import is_float, is_real

from ._report_parts import slug
from ._style import FIGURE_FORMATS, paper_style, save_figure

__all__ = []

#: The heading and anchor of the report's first paragraphs (:attr:`Report.overview`).
OVERVIEW_TITLE, OVERVIEW_KEY = "In short", "in-short"
#: How the page introduces the one assumption clause a findings group's sentences share.
SHARED_ASSUMES = "Each finding above assumes:"
#: How the page introduces the trailing assumptions a group's clauses share
#: (:func:`shared_tail`), and how each of those findings points to them.
SHARED_TAIL, SHARED_TAIL_POINTER = ("The group's shared assumptions:",
                                    "the group's shared assumptions (below).")


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a;
       max-width: 62rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem;
     margin-top: 2.2rem; }
.sub { color: #555; margin-top: 0; }
.findings { background: #f4f7fb; border-left: 4px solid #0072B2; padding: 0.2rem 1rem; }
.findings h4 { margin: 0.6rem 0 0.1rem 0; font-size: 0.95rem; }
.findings ul { margin: 0.1rem 0 0.4rem 0; padding-left: 1.4rem; }
.findings p.assumes { margin: 0 0 0.5rem 1.4rem; font-size: 0.9rem; color: #333; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.85rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left;
         vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.dense { font-size: 0.78rem; }
table.dense th, table.dense td { padding: 0.25rem 0.4rem; }
.wide > table { margin-bottom: 0.3rem; }
p.caption { color: #555; font-size: 0.8rem; max-width: 48rem; margin: 0 0 0.6rem 0; }
figure { margin: 1.2rem 0; }
figure svg { width: 100%; height: auto; display: block; }
figure.single svg { max-width: 36rem; }
figure.double svg { max-width: 60rem; }
figcaption { color: #444; font-size: 0.85rem; max-width: 44rem; }
.wide { overflow-x: auto; }
code { background: #f3f3f3; padding: 0 0.2rem; }
footer { margin-top: 3rem; color: #666; font-size: 0.8rem; }
nav ol { columns: 2; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav { display: none; }
  figure, table { break-inside: avoid; }
  .wide { overflow: visible; }
  table, table.dense { font-size: 7.5pt; }
  h2 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""


def _prefix_svg_ids(svg, prefix):
    """Make the ids of one inline SVG unique in the page (matplotlib reuses glyph ids)."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)

    def ref(m):
        return m.group(1) + prefix + m.group(2) if m.group(2) in ids else m.group(0)

    svg = re.sub(r'(url\(#)([^)]+)(?=\))', ref, svg)
    return re.sub(r'((?:xlink:)?href="#)([^"]+)(?=")', ref, svg)


def _cell(col, row):
    value = row.get(col.key, "")
    return col.fmt(value) if value != "" else ""


def _is_numeric_column(col, rows):
    """Numbers in every row, where a row may leave it out (None: shown as n/a, not a word)."""
    values = [r.get(col.key) for r in rows]
    present = [v for v in values if v is not None]
    return bool(present) and all(is_real(v) for v in present)


def _shown_columns(t):
    """The columns of ``t`` that hold something in some row: a column empty in every row
    (a note no row needed) is left out of the page and the Markdown; the CSV keeps it."""
    return tuple(c for c in t.columns if any(_cell(c, row) != "" for row in t.rows))


#: Tables with more columns than this are set dense (smaller type, narrower padding) so
#: that they fit the page's text width (62rem) without scrolling.
DENSE_COLUMNS = 8


def _breakable(text):
    """Escaped cell text that may wrap after a comma between the items of a list (a layout
    ``tp=8,dp=16,ep=128``) or after a slash in a path (``tensorrt_llm/_torch/...``) rather
    than widen its column; system names stay whole."""
    return re.sub(r"([,/])(?=[A-Za-z_])", r"\1<wbr>", html.escape(text))


def _html_table(t):
    if not t.rows:  # a table kept only as data (every row of a sweep)
        return (f'<p class="sub">{html.escape(t.caption or "All rows")}: '
                f'<a href="{t.name}.csv">{t.name}.csv</a></p>')
    columns = _shown_columns(t)
    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in columns)
    numeric = [_is_numeric_column(c, t.rows) for c in columns]
    body = []
    for row in t.rows:
        cells = "".join(
            f'<td class="num">{html.escape(_cell(c, row))}</td>' if num
            else f"<td>{_breakable(_cell(c, row))}</td>" for c, num in zip(columns, numeric))
        body.append(f"<tr>{cells}</tr>")
    # the caption after the scrolling box, not a <caption> inside it: a <caption> is as wide
    # as its table, so a table wider than the window took its caption out of view with it
    caption = f'<p class="caption">{html.escape(t.caption)}</p>' if t.caption else ""
    title = f"<h3>{html.escape(t.title)}</h3>" if t.title else ""
    dense = ' class="dense"' if len(columns) > DENSE_COLUMNS else ""
    return (f'{title}<div class="wide"><table id="table-{t.name}"{dense}>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            f"{caption}"
            f'<p class="sub">Data: <a href="{t.name}.csv">{t.name}.csv</a></p>')


def shared_assumption(group):
    """A findings group's sentences and the one ``Assumes: ...`` clause they all end with,
    to be said once under the group (the MoE decode group repeated a 730-character clause
    four times); ``(group, "")`` where the sentences' clauses differ, or fewer than two
    have one. The report's findings (``Report.findings``, the CLI's JSON) keep each sentence
    whole: one quoted alone must say what it assumes.

    >>> shared_assumption(("A is 2x. Assumes: x.", "B is 3x. Assumes: x."))
    (('A is 2x.', 'B is 3x.'), 'x.')
    >>> shared_assumption(("A is 2x. Assumes: x.", "B is 3x. Assumes: y."))[1]
    ''
    """
    group = tuple(group)
    heads, tails = zip(*(s.partition(" Assumes: ")[::2] for s in group)) if group else ((), ())
    if len(group) < 2 or len(set(tails)) != 1 or not tails[0]:
        return group, ""
    return heads, tails[0]


def clause_parts(clause):
    """``clause`` split at its top-level ``'; '`` (never inside parentheses).

    >>> clause_parts("a (b; c); d; e.")
    ['a (b; c)', 'd', 'e.']
    """
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(clause):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and clause.startswith("; ", i):
            parts.append(clause[start:i])
            start = i + 2
    return parts + [clause[start:]]


def shared_tail(group):
    """A findings group's sentences as the page shows them and the trailing parts of their
    ``Assumes:`` clauses that all of them end with, to be said once under the group; ``(group,
    "")`` where fewer than two sentences have a clause, their clauses end differently, or
    saying the parts once would not shorten the page. For groups whose clauses differ in a
    few words before a long shared part (the serving findings: what each reads, then the
    decode model's settings) or whose findings lack one (the scaling findings: what each
    rests on, then the report's reduced range). A sentence that shares them ends with
    :data:`SHARED_TAIL_POINTER` in their place, so ``shown[:-len(SHARED_TAIL_POINTER)] +
    tail`` is the finding as written; :attr:`Report.findings` keep it whole.

    >>> t = "the decode model's settings; H100 chips; the link bandwidths and latencies."
    >>> s, tail = shared_tail([f"A. Assumes: x; {t}", f"B. Assumes: y; {t}",
    ...                        f"C. Assumes: z (w; v); {t}", "D."])
    >>> s
    ("A. Assumes: x; the group's shared assumptions (below).", "B. Assumes: y; the group's shared assumptions (below).", "C. Assumes: z (w; v); the group's shared assumptions (below).", 'D.')
    >>> tail == t
    True
    """
    group = tuple(group)
    split = [s.partition(" Assumes: ") for s in group]
    clauses = [clause_parts(clause) for _, sep, clause in split if sep]
    n = 0
    while (len(clauses) >= 2 and n < min(map(len, clauses))
           and len({c[-1 - n] for c in clauses}) == 1):
        n += 1
    tail = "; ".join(clauses[0][len(clauses[0]) - n:]) if n else ""
    # said once (its introduction, the space after it, and one pointer per sentence) against
    # said in each: the note reads f"{SHARED_TAIL} {tail}" (findings_as_shown)
    saved = (len(clauses) - 1) * len(tail) - len(SHARED_TAIL) - 1 - len(clauses) * len(
        SHARED_TAIL_POINTER)
    if not tail or saved <= 0:
        return group, ""
    shown = tuple(head + sep + "; ".join(clause_parts(clause)[:-n] + [SHARED_TAIL_POINTER])
                  if sep else head for head, sep, clause in split)
    return shown, tail


def findings_as_shown(group):
    """A findings group's sentences as the page shows them and the note said once under
    them: the one clause they all share (:func:`shared_assumption`), else their shared
    trailing assumptions (:func:`shared_tail`), else ``""``.

    >>> findings_as_shown(("A is 2x. Assumes: x.", "B is 3x. Assumes: x."))
    (('A is 2x.', 'B is 3x.'), 'Each finding above assumes: x.')
    """
    sentences, assumes = shared_assumption(group)
    if assumes:
        return sentences, f"{SHARED_ASSUMES} {assumes}"
    sentences, tail = shared_tail(group)
    return sentences, (f"{SHARED_TAIL} {tail}" if tail else "")


def _provenance_text():
    """Version, commit and library versions; no run date, so that reruns are identical."""
    from ._provenance import provenance

    return (f"{provenance()}. No run date is written (reruns give identical bytes); the "
            "commit dates the code.")


def render_html(report, svgs):
    """The report as one self-contained HTML page; ``svgs`` maps figure name to SVG text."""
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>cofabric report: {esc(' vs '.join(report.systems[:2]))}</title>",
             f"<style>{_CSS}</style>", "</head>", "<body>",
             f"<h1>Fabric comparison: {esc(', '.join(report.systems))}</h1>",
             ('<p class="sub">Generated by cofabric. Reproduce with '
             f"<code>{esc(report.command)}</code>.</p>"),
             f'<p class="sub">Provenance: {esc(_provenance_text())}</p>']
    # what was compared, under which runtime, and the answer, then where to find the rest:
    # the first screen a reader sees (the findings run to several screens)
    if report.overview:
        parts.append(f'<h2 id="{OVERVIEW_KEY}">{OVERVIEW_TITLE}</h2>')
        parts += [f"<p>{esc(p)}</p>" for p in report.overview]
    parts.append("<nav><h2>Contents</h2><ol>")
    parts.append('<li><a href="#findings">Findings</a></li>')
    parts += [f'<li><a href="#{s.key}">{esc(s.title)}</a></li>' for s in report.sections]
    parts.append("</ol></nav>")
    parts += ["<h2 id=\"findings\">Findings</h2>", '<div class="findings">']
    for title, group in report.finding_groups:
        sentences, note = findings_as_shown(group)
        parts.append(f"<h4>{esc(title)}</h4><ul>")
        parts += [f"<li>{esc(s)}</li>" for s in sentences]
        parts.append("</ul>")
        if note:
            parts.append(f'<p class="assumes">{esc(note)}</p>')
    parts.append("</div>")
    for s in report.sections:
        parts.append(f'<section id="{s.key}"><h2>{esc(s.title)}</h2>')
        parts += [f"<p>{esc(p)}</p>" for p in s.text]
        parts += [_html_table(t) for t in s.tables]
        for f in s.figures:
            svg = _prefix_svg_ids(svgs[f.name], f"{slug(f.name)}-")
            parts.append(
                f'<figure id="fig-{f.name}" class="{f.column}">{svg}<figcaption><b>'
                f"{esc(f.title)}.</b> {esc(f.caption)} Files: "
                + ", ".join(f'<a href="figures/{f.name}.{x}">{x.upper()}</a>'
                            for x in FIGURE_FORMATS)
                + "</figcaption></figure>")
        parts.append("</section>")
    parts.append("<footer>All numbers come from the model and the parameters listed under "
                 "Assumptions; none is measured. Tables are in the CSV files beside this "
                 "page.</footer>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def md_anchor(title):
    """The anchor a Markdown viewer (GitHub's rule) gives the heading ``title``.

    >>> md_anchor("Chip comparison (not a fabric comparison)")
    'chip-comparison-not-a-fabric-comparison'
    >>> md_anchor("Equal chip, equal cost, equal power")
    'equal-chip-equal-cost-equal-power'
    """
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _md_escape(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report):
    """The report as Markdown, figures linked from ``figures/``."""
    lines = [f"# Fabric comparison: {', '.join(report.systems)}", "",
             f"Generated by cofabric. Reproduce with `{report.command}`.", "",
             f"Provenance: {_provenance_text()}", ""]
    if report.overview:
        lines += [f"## {OVERVIEW_TITLE}", ""]
        for p in report.overview:
            lines += [p, ""]
    # the page's contents, linked as GitHub and most Markdown viewers name headings
    lines += ["## Contents", ""]
    lines += [f"{i}. [{t}](#{md_anchor(t)})" for i, t in
              enumerate(["Findings", *(s.title for s in report.sections)], 1)]
    lines += ["", "## Findings", ""]
    for title, group in report.finding_groups:
        sentences, note = findings_as_shown(group)
        lines += [f"**{title}**", ""] + [f"- {s}" for s in sentences] + [""]
        if note:
            lines += [note, ""]
    for s in report.sections:
        lines += ["", f"## {s.title}", ""]
        for p in s.text:
            lines += [p, ""]
        for t in s.tables:
            if not t.rows:
                lines += [f"{t.caption or 'All rows'}: [{t.name}.csv]({t.name}.csv)", ""]
                continue
            if t.title:
                lines += [f"### {t.title}", ""]
            columns = _shown_columns(t)
            lines.append("| " + " | ".join(_md_escape(c.label) for c in columns) + " |")
            lines.append("|" + "|".join(
                "---:" if _is_numeric_column(c, t.rows) else "---" for c in columns) + "|")
            for row in t.rows:
                lines.append("| " + " | ".join(_md_escape(_cell(c, row)) for c in columns)
                             + " |")
            lines += ["", (t.caption + " " if t.caption else "") + f"Data: [{t.name}.csv]"
                      f"({t.name}.csv)", ""]
        for f in s.figures:
            lines += [f"![{f.title}](figures/{f.name}.svg)", "",
                      (f"*{f.title}.* {f.caption} ([PDF](figures/{f.name}.pdf), "
                      f"[PNG](figures/{f.name}.png))"), ""]
    return "\n".join(lines).rstrip() + "\n"


def csv_text(table):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    rows = table.csv_rows if table.csv_rows is not None else table.rows
    # Every field of the rows (not only the shown columns), in first-seen order.
    keys = list(table.csv_columns or dict.fromkeys(k for row in rows for k in row)
                or [c.key for c in table.columns])
    w.writerow(keys)
    for row in rows:
        # repr of a float round-trips exactly; float() first, since numpy 2's repr of its
        # scalars is "np.float64(...)" (and an np.float32 is the float it converts to)
        w.writerow([repr(float(v)) if is_float(v) else v
                    for v in (row.get(k, "") for k in keys)])
    return buf.getvalue()


def _render_one(spec, directory, systems=()):
    """Draw one figure in the paper style, save PDF/SVG/PNG, return its SVG text.

    System ``i`` of ``systems`` has colour ``i`` in every figure.
    """
    from ._plots import system_colors

    with paper_style(spec.column, height=spec.height), system_colors(systems):
        fig = spec.draw()
        paths = save_figure(fig, Path(directory) / spec.name)
    svg = paths[FIGURE_FORMATS.index("svg")].read_text(encoding="utf-8")
    return svg[svg.find("<svg"):]


class FigureDrawing:
    """Figures drawn on ``executor`` while the report is still being built: ``cofabric
    report`` passes :meth:`section` to :func:`analysis.build_report` as ``on_section``, so
    a section's figures start drawing once it is built (the collective figures, about half
    of the drawing, while the later sections compute), and :func:`analysis.write_report`
    takes them with :meth:`finish`. The same files as drawing them after the build: each is
    drawn alone by :func:`_render_one` from its pickled spec, as :func:`render_figures` does
    on an executor. They are drawn into a private directory beside the report's
    (``parent``), which :meth:`finish` moves into the report; :meth:`close` removes it
    however the run ends."""

    def __init__(self, executor, systems, parent):
        import tempfile

        self.executor, self.systems = executor, tuple(systems)
        self.directory = Path(tempfile.mkdtemp(prefix=".figures-", dir=parent))
        self.futures = {}

    def section(self, section):
        """Start drawing ``section``'s figures."""
        for spec in section.figures:
            self._start(spec)

    def _start(self, spec):
        if spec.name not in self.futures:
            self.futures[spec.name] = self.executor.submit(
                _render_one, spec, str(self.directory / "figures"), self.systems)

    def finish(self, figures, directory, systems, quiet=False):
        """Wait for ``figures`` (starting any not yet started), move their files to
        ``directory``; return name -> SVG text, as :func:`render_figures`."""
        import concurrent.futures
        import os

        from ._progress import Progress

        if tuple(systems) != self.systems:      # the colours follow the systems' order
            raise ValueError(f"figures drawn for systems {self.systems}, the report has "
                             f"{tuple(systems)}")
        for spec in figures:
            self._start(spec)
        wanted = [self.futures[spec.name] for spec in figures]
        with Progress(len(wanted), "figures", quiet=quiet, live=True) as bar:
            for _ in concurrent.futures.as_completed(wanted):
                bar.update()
        # in figure order: the first failing figure raises, as it would drawn serially
        svgs = {spec.name: fut.result() for spec, fut in zip(figures, wanted)}
        if figures:
            os.rename(self.directory / "figures", directory)
        return svgs

    def close(self):
        """Stop what has not started and remove the drawing directory (after the executor
        has finished what had started: a figure still drawing writes its files)."""
        import shutil

        for fut in self.futures.values():
            fut.cancel()
        shutil.rmtree(self.directory, ignore_errors=True)


def render_figures(figures, directory, quiet=False, executor=None, systems=()):
    """Draw each figure once (in parallel on ``executor``); return name -> SVG text."""
    from ._sweep import sweep

    svgs = sweep(_render_one, [{"spec": f, "directory": str(directory),
                                "systems": tuple(systems)} for f in figures],
                 executor=executor, quiet=quiet, desc="figures")
    return {f.name: svg for f, svg in zip(figures, svgs)}
