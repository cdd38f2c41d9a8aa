"""The paper figure style and the one helper that saves figures reproducibly.

The style lives in ``figures/styles/paper.mplstyle`` (the repository's single
copy). An installed package carries it as ``analysis/styles/paper.mplstyle``:
``setup.cfg`` maps the package ``analysis.styles`` onto ``figures/styles`` so that
the file is shipped without a second copy that could drift. :func:`style_path`
looks in the installed location first and then in the source checkout.

Nothing here changes matplotlib's state on import: the style is applied by the
:func:`paper_style` context manager, which restores every rcParam on exit.

Examples
--------
>>> import matplotlib.pyplot as plt
>>> with paper_style("double"):
...     fig, ax = plt.subplots()
...     width = fig.get_size_inches()[0]
>>> float(width)
7.16
>>> plt.close(fig)
"""

import contextlib
import io
from importlib import resources
from pathlib import Path

from fabric import SpecError
from fabric._system import file_name
from fabric._units import check_choice, check_number, items_of, kind_error, show_value, text_of

__all__ = ["COLUMN_SIZES", "FIGURE_FORMATS", "paper_style", "save_figure", "style_path"]

#: Figure size (width, height) in inches per column layout. Widths follow the
#: IEEEtran/ACM two-column templates: one column 3.5 in, the text width 7.16 in.
COLUMN_SIZES = {"single": (3.5, 2.4), "double": (7.16, 2.6)}

#: The formats :func:`save_figure` writes, each with metadata that carries no
#: date, no software version and no random id.
FIGURE_FORMATS = ("pdf", "svg", "png")

_METADATA = {
    # None removes a key matplotlib would otherwise fill with today's date or its version.
    "pdf": {"Creator": "cofabric", "Producer": None, "CreationDate": None, "ModDate": None},
    "svg": {"Creator": "cofabric", "Date": None},
    "png": {"Software": None},
}
_HASHSALT = "cofabric"


def style_path(name="paper"):
    """Return the path of the style file ``name`` (``figures/styles/<name>.mplstyle``).

    Parameters
    ----------
    name : str
        Style name without extension.

    Raises
    ------
    TypeError
        If ``name`` is not a str.
    ValueError
        If neither the installed package nor the source checkout has that style.

    Examples
    --------
    >>> style_path().name
    'paper.mplstyle'
    """
    filename = f"{text_of(name, 'style name')}.mplstyle"
    checkout = Path(__file__).resolve().parent.parent / "figures" / "styles"
    for where in (resources.files("analysis").joinpath("styles"), checkout):
        # matched against the files there, not opened by name: a 5000-character name was
        # the operating system's "File name too long", and '../x' no style
        if where.is_dir() and filename in {p.name for p in where.iterdir()}:
            return Path(str(where.joinpath(filename)))
    raise ValueError(f"no figure style called {show_value(name)}: looked in the installed "
                     f"package (analysis/styles) and in {checkout}")


def paper_style(column="single", *, height=None):
    """Apply the paper style, sized for one or two columns; restore rcParams on exit.

    The arguments are checked when it is called, not when its ``with`` block is entered.

    Parameters
    ----------
    column : {"single", "double"}
        ``"single"``: 3.5 in wide; ``"double"``: the full text width, 7.16 in.
    height : float, optional
        Figure height in inches, finite and positive (default from :data:`COLUMN_SIZES`).

    Returns
    -------
    context manager
        Sets matplotlib's style and figure size inside its ``with`` block.

    Raises
    ------
    TypeError
        For a column that is not a str or a height that is not a number (a bool included).
    ValueError
        For an unknown column or a height that is not finite and positive.

    Examples
    --------
    >>> import matplotlib as mpl
    >>> before = mpl.rcParams["font.size"]
    >>> with paper_style():
    ...     mpl.rcParams["font.size"]
    8.0
    >>> mpl.rcParams["font.size"] == before
    True
    """
    width, default_height = COLUMN_SIZES[check_choice(column, "column", COLUMN_SIZES)]
    if height is not None:
        height = check_number("height", height, unit=" inches", strict=True)
    return _styled(width, default_height if height is None else height)


@contextlib.contextmanager
def _styled(width, height):
    """:func:`paper_style`'s context, its arguments checked."""
    import matplotlib as mpl
    import matplotlib.style

    with mpl.style.context(str(style_path("paper"))):
        mpl.rcParams["figure.figsize"] = (width, height)
        yield


def _figure_bytes(fig, fmt, dpi=None):
    import matplotlib as mpl

    check_choice(fmt, "format", FIGURE_FORMATS)
    buf = io.BytesIO()
    # The salt seeds SVG element ids; fixed here so saving is reproducible in any style.
    with mpl.rc_context({"svg.hashsalt": _HASHSALT}):
        fig.savefig(buf, format=fmt, metadata=dict(_METADATA[fmt]),
                    **({"dpi": dpi} if dpi else {}))
    return buf.getvalue()


def _drop_layout_engine(fig):
    """Remove ``fig``'s layout engine entirely (the public way: ``None`` with no rc default)."""
    import matplotlib as mpl

    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)


def save_figure(fig, path_stem, formats=FIGURE_FORMATS, *, dpi=None):
    """Save ``fig`` as ``<path_stem>.<fmt>`` for each format, byte-for-byte reproducibly.

    PDF and SVG carry no creation date and no software version; SVG ids come
    from a fixed salt; PNG carries no text chunks. The same figure therefore
    gives the same bytes on every run (with the same matplotlib, fonttools and fonts).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path_stem : str or os.PathLike
        Path without extension; missing parent directories are created.
    formats : {"pdf", "svg", "png"} or a sequence of them
    dpi : float, optional
        Raster resolution for PNG in dots per inch, finite and positive (default:
        ``savefig.dpi``, 300 in the paper style).

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of ``formats``.

    Raises
    ------
    TypeError
        For a ``fig`` that is not a figure, a ``path_stem`` that is not a file name, a format
        that is not a str, or a ``dpi`` that is not a number (a bool included).
    ValueError
        For an unknown or no format, a ``dpi`` that is not finite and positive, or a
        ``path_stem`` holding a NUL character.

    Examples
    --------
    >>> import tempfile, matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(); _ = ax.plot([0, 1], [0, 1])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in save_figure(fig, Path(d) / "line", formats=("svg", "png"))]
    ['line.svg', 'line.png']
    >>> plt.close(fig)
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise kind_error(fig, "fig", "a matplotlib Figure")
    stem = Path(file_name(path_stem, "path_stem"))
    names = (formats,) if isinstance(formats, str) else items_of(formats)
    if names is None:
        raise kind_error(formats, "formats", "a format's name or a sequence of them")
    for f in names:
        check_choice(f, "each format", FIGURE_FORMATS)
    if not names:
        raise SpecError(f"formats must name one or more of {', '.join(FIGURE_FORMATS)}, got "
                        f"formats={show_value(tuple(names))}")
    if dpi is not None:
        dpi = check_number("dpi", dpi, strict=True)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    engine = fig.get_layout_engine()
    try:
        for fmt in names:
            path = stem.with_name(f"{stem.name}.{fmt}")
            path.write_bytes(_figure_bytes(fig, fmt, dpi))
            written.append(path)
            if engine is not None and fig.get_layout_engine() is not None:
                # The first file fixed the layout; the others reuse it. With no layout
                # engine at all (not even "none"'s placeholder, which still makes savefig
                # draw the figure once more before drawing it to the file) each further
                # format draws the figure once: 4 draws for 3 formats instead of 6.
                _drop_layout_engine(fig)
    finally:
        if fig.get_layout_engine() is not engine:
            fig.set_layout_engine(engine)
    return written
