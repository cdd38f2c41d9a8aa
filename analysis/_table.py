"""Plain-text tables for the CLI: aligned columns, numbers right-aligned."""

from fabric._units import is_real

__all__ = ["format_table"]


def format_table(headers, rows):
    """Return an aligned text table.

    >>> print(format_table(["a", "bb"], [["x", 1], ["yy", 22]]))
    a   bb
    --  --
    x    1
    yy  22
    """
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(_is_number(r[i]) for r in rows) if rows else False
               for i in range(len(headers))]

    def line(values):
        out = []
        for i, v in enumerate(values):
            out.append(v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]))
        return "  ".join(out).rstrip()

    return "\n".join([line(list(headers)), line(["-" * w for w in widths])]
                     + [line(r) for r in cells])


def _is_number(value):
    return is_real(value)      # numpy's numbers too: a column of np.int64 counts is numeric
