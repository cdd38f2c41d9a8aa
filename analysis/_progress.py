"""A progress bar for long work, on stderr, only when someone is watching.

The bar is drawn only when its stream is a terminal (``isatty()``), so pipes,
files and CI logs stay clean, and never when the caller asks for quiet
(``--quiet`` on the CLI). No third-party dependency: one line redrawn with a
carriage return, at most ten times a second, and finished with a newline.

Examples
--------
>>> import io
>>> with Progress(3, "costing", stream=io.StringIO()) as bar:  # not a terminal: silent
...     for _ in range(3):
...         bar.update()
>>> bar.done, bar.enabled
(3, False)
"""

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Count finished items and draw ``desc [#####.....] done/total elapsed`` on a terminal.

    Parameters
    ----------
    total : int
        The number of items expected (>= 0).
    desc : str
        A short label printed before the bar.
    stream : file-like, optional
        Where to draw (default ``sys.stderr``, looked up at construction).
    enabled : bool, optional
        Force drawing on or off. Default: draw only if ``stream.isatty()``.
    quiet : bool
        If true, never draw (wins over ``enabled``).
    width : int
        Characters in the bar itself.
    min_interval : float
        Seconds between redraws; the final state is always drawn.

    Raises
    ------
    ValueError
        If ``total`` is negative or ``width`` below 1.
    """

    def __init__(self, total, desc="", *, stream=None, enabled=None, quiet=False, width=30,
                 min_interval=0.1):
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise ValueError(f"total must be a non-negative int, got total={total!r}")
        if width < 1:
            raise ValueError(f"width must be >= 1, got width={width!r}")
        self.total = total
        self.desc = desc
        self.stream = sys.stderr if stream is None else stream
        if quiet:
            enabled = False
        elif enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.width = width
        self.min_interval = min_interval
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = None
        self._drawn_done = None
        self._closed = False

    def __enter__(self):
        self._draw(force=True)
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def update(self, n=1):
        """Record ``n`` more finished items and redraw if enough time has passed."""
        self.done += n
        self._draw(force=self.done >= self.total)

    def render(self):
        """The bar's text for the current state (without the carriage return)."""
        frac = 1.0 if self.total == 0 else min(self.done / self.total, 1.0)
        filled = round(frac * self.width)
        elapsed = int(time.monotonic() - self._start)
        label = f"{self.desc} " if self.desc else ""
        return (f"{label}[{'#' * filled}{'.' * (self.width - filled)}] "
                f"{self.done}/{self.total} {elapsed // 60}:{elapsed % 60:02d}")

    def _draw(self, force=False):
        if not self.enabled or self._closed:
            return
        now = time.monotonic()
        if not force and self._last_draw is not None and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        self._drawn_done = self.done
        self.stream.write("\r" + self.render())
        self.stream.flush()

    def close(self):
        """Draw the final state and end the line (only if anything was drawn)."""
        if self._closed:
            return
        if self._drawn_done != self.done:  # the final count is shown once, not twice
            self._draw(force=True)
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
        self._closed = True
