"""A progress bar for long work, on stderr, only when someone is watching.

The bar is drawn only when its stream is a terminal (``isatty()``) or a Jupyter
notebook's output stream (ipykernel's ``OutStream``, which is not a terminal but
renders the carriage return as a redraw of the line), so pipes, files and CI logs
stay clean, and never when the caller asks for quiet (``--quiet`` on the CLI). No
third-party dependency: one line redrawn with a carriage return, at most ten times a
second, and finished with a newline. With ``live=True`` a background thread redraws
the line every second, so that the elapsed time moves during one long step (an LP
solve) and the current stage (:meth:`Progress.stage`) is shown.

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
import threading
import time

from fabric._units import check_count, check_number, flag_of, text_of

__all__ = ["Progress"]


def watched(stream):
    """Whether someone watches ``stream``: a terminal, or a Jupyter notebook's output
    (ipykernel's ``OutStream``: not a terminal, but it redraws on a carriage return)."""
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return True
    return type(stream).__module__.split(".")[0] == "ipykernel"


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
    live : bool
        Also redraw every ``live_interval`` seconds from a background thread (for
        work whose steps are few and long).
    live_interval : float
        Seconds between the live redraws.

    Raises
    ------
    TypeError
        An argument of the wrong kind: a count that is no integer, a time that is no number,
        a flag that is no bool (``enabled='no'``), a ``desc`` that is no str.
    ValueError
        If ``total`` is negative, ``width`` below 1, ``min_interval`` negative or
        ``live_interval`` not positive (or either not finite).
    """

    def __init__(self, total, desc="", *, stream=None, enabled=None, quiet=False, width=30,
                 min_interval=0.1, live=False, live_interval=1.0):
        # each argument checked here: a width of 2.5 or a min_interval of 'x' passed and
        # failed at the first draw, and enabled='no' was read by its truth (the bar drew)
        total = check_count(total, "total", 0, "a non-negative int")
        width = check_count(width, "width", 1)
        min_interval = check_number("min_interval", min_interval, unit=" seconds")
        live_interval = check_number("live_interval", live_interval, unit=" seconds",
                                     strict=True)     # 0: a thread redrawing without a pause
        quiet, live = flag_of(quiet, "quiet"), flag_of(live, "live")
        enabled = flag_of(enabled, "enabled", optional=True)
        self.total = total
        self.desc = text_of(desc, "desc")
        self.stream = sys.stderr if stream is None else stream
        if quiet:
            enabled = False
        elif enabled is None:
            enabled = watched(self.stream)
        self.enabled = enabled
        self.width = width
        self.min_interval = min_interval
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = None
        self._drawn_done = None
        self._closed = False
        self._stage = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if live and self.enabled:
            self._thread = threading.Thread(target=self._tick, args=(live_interval,),
                                            daemon=True)

    def _tick(self, interval):
        while not self._stop.wait(interval):
            self._draw(force=True)

    def stage(self, text):
        """Show ``text`` (what is being done now) after the count; redraws."""
        self._stage = str(text)
        self._draw(force=True)

    def __enter__(self):
        self._draw(force=True)
        if self._thread is not None:
            self._thread.start()
        return self

    def __exit__(self, exc_type, *exc):
        # on an error the bar is erased, not ended: the error's one line stands alone
        self.close(erase=exc_type is not None)
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
        stage = f" {self._stage}" if self._stage else ""
        return (f"{label}[{'#' * filled}{'.' * (self.width - filled)}] "
                f"{self.done}/{self.total} {elapsed // 60}:{elapsed % 60:02d}{stage}")

    def _draw(self, force=False):
        if not self.enabled or self._closed:
            return
        with self._lock:
            now = time.monotonic()
            if (not force and self._last_draw is not None
                    and now - self._last_draw < self.min_interval):
                return
            self._last_draw = now
            self._drawn_done = self.done
            # pad so that a shorter line (a shorter stage) leaves nothing of the last one
            text = self.render()
            self.stream.write("\r" + text.ljust(getattr(self, "_width_drawn", 0)))
            self._width_drawn = len(text)
            self.stream.flush()

    def close(self, erase=False):
        """Draw the final state and end the line (only if anything was drawn); with
        ``erase``, blank the line instead and leave the cursor at its start (the work
        failed: its error is the one line to show).

        >>> import io
        >>> out = io.StringIO()
        >>> try:
        ...     with Progress(2, "x", stream=out, enabled=True):
        ...         raise KeyError("no such thing")
        ... except KeyError:
        ...     pass
        >>> out.getvalue()[-3:], "\\n" in out.getvalue()      # blanked: no line left
        ('  \\r', False)
        """
        if self._closed:
            return
        if self._thread is not None and self._thread.is_alive():
            self._stop.set()
            self._thread.join()
        if erase:
            if self.enabled:
                self.stream.write("\r" + " " * getattr(self, "_width_drawn", 0) + "\r")
                self.stream.flush()
            self._closed = True
            return
        if self._drawn_done != self.done:  # the final count is shown once, not twice
            self._draw(force=True)
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
        self._closed = True
