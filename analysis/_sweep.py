"""Parameter sweeps on one core, local processes or a cluster, with the serial result.

A sweep calls one function at every point of a grid (systems x ops x algorithms
x sizes, or any other parameters) and returns the results **in grid order**, so
the output does not depend on how the work was spread: any
:class:`concurrent.futures.Executor` gives the same list as the serial loop.

* Serial: ``sweep(f, grid)``.
* Local processes: ``sweep(f, grid, executor=ProcessPoolExecutor(4))``; the CLI's
  ``--jobs N`` does this.
* A Dask cluster, for sweeps too large for one machine (``pip install
  cofabric[dask]``)::

      from distributed import Client
      with Client("tcp://scheduler:8786") as client:   # or Client() for a local cluster
          results = sweep(f, grid, executor=client.get_executor(), chunksize=16)

  ``Client.get_executor()`` returns a ``concurrent.futures.Executor`` whose tasks
  run on the cluster's workers; ``f`` must be importable there (a module-level
  function of an installed package), and its arguments and results picklable.

With an executor, ``f`` and the points are pickled: use a module-level function,
not a lambda. ``chunksize`` groups points into one task each to amortize the
per-task overhead when ``f`` is cheap.

Examples
--------
>>> grid = parameter_grid(p=[2, 4], size=[1, 10])
>>> grid
[{'p': 2, 'size': 1}, {'p': 2, 'size': 10}, {'p': 4, 'size': 1}, {'p': 4, 'size': 10}]
>>> sweep(_example_cost, grid, quiet=True)
[2, 20, 4, 40]
"""

import concurrent.futures
import itertools
from collections.abc import Mapping

from fabric import SpecError
from fabric._units import check_count, kind_error, sequence_of, show_value

from ._progress import Progress

__all__ = ["parameter_grid", "sweep"]


def _example_cost(p, size):
    # A module-level function so that the doctest could also run in a process pool.
    return p * size


def parameter_grid(**axes):
    """Return the Cartesian product of ``axes`` as a list of dicts, last axis fastest.

    Parameters
    ----------
    **axes : sequence
        Each keyword is one parameter; its value the values to sweep, in order.

    Raises
    ------
    fabric.SpecError
        If an axis is empty.
    TypeError
        If an axis is not a sequence of values (a string is refused: say ``["x"]`` for one
        value).

    Examples
    --------
    >>> parameter_grid(op=["all-reduce"], size=[1024, 2048])
    [{'op': 'all-reduce', 'size': 1024}, {'op': 'all-reduce', 'size': 2048}]
    """
    names = list(axes)
    values = []
    for name in names:
        vals = sequence_of(axes[name], f"axis {show_value(name)}", "values")  # wrong kind: TypeError
        if not vals:
            raise SpecError(f"axis {show_value(name)} has no values")
        values.append(vals)
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _points(grid):
    if isinstance(grid, Mapping):
        return parameter_grid(**grid)
    points = sequence_of(grid, "grid", "points (mappings of parameter names to values), or "
                                       "one mapping of axes")    # 5 was "not iterable"
    for i, point in enumerate(points):
        if not isinstance(point, Mapping):
            raise kind_error(point, f"grid point {i}",
                             "a mapping of parameter names to values")
    return [dict(p) for p in points]


def _run_chunk(func, chunk):
    return [func(**point) for point in chunk]


def sweep(func, grid, *, executor=None, chunksize=1, quiet=False, desc="sweep", stream=None):
    """Call ``func(**point)`` at every point of ``grid``; return the results in grid order.

    Parameters
    ----------
    func : callable
        Called with each point's parameters as keywords. With an executor it is
        pickled, so it must be a module-level function.
    grid : mapping or iterable of mappings
        A mapping of axis name to values (expanded by :func:`parameter_grid`),
        or the points themselves.
    executor : concurrent.futures.Executor, optional
        Where to run (a ``ProcessPoolExecutor``, a Dask ``Client.get_executor()``...).
        Default: serially in this process. The executor is not shut down.
    chunksize : int
        Points per submitted task (ignored when serial).
    quiet : bool
        Suppress the progress bar (which is only drawn on a terminal anyway).
    desc : str
        Label of the progress bar.
    stream : file-like, optional
        Where the progress bar goes (default stderr).

    Returns
    -------
    list
        ``func``'s results, one per point, in the order of the points, whatever
        order the executor finished them in.

    Raises
    ------
    TypeError
        ``func`` not callable, ``grid`` neither a mapping nor a sequence of mappings, or
        another argument of the wrong kind.
    Exception
        The exception of the first point (in grid order) whose call failed.

    Examples
    --------
    >>> from analysis import parameter_grid
    >>> sweep(lambda x, y: x * y, parameter_grid(x=[1, 2], y=[10, 20]), quiet=True)
    [10, 20, 20, 40]
    """
    if not callable(func):      # was "'int' object is not callable" at the first point
        raise kind_error(func, "func", "a callable")
    chunksize = check_count(chunksize, "chunksize", 1, "an int >= 1")
    if executor is not None and not isinstance(executor, concurrent.futures.Executor):
        raise kind_error(executor, "executor", "a concurrent.futures.Executor")
    points = _points(grid)
    # live: a sweep of few long points (the scaling study's 16k-chip fabrics) still shows
    # its elapsed time moving
    with Progress(len(points), desc, quiet=quiet, stream=stream, live=True) as bar:
        if executor is None:
            results = []
            for point in points:
                results.append(func(**point))
                bar.update()
            return results
        chunks = [points[i:i + chunksize] for i in range(0, len(points), chunksize)]
        futures = [executor.submit(_run_chunk, func, chunk) for chunk in chunks]
        sizes = {f: len(c) for f, c in zip(futures, chunks)}
        try:
            for fut in concurrent.futures.as_completed(futures):
                bar.update(sizes[fut])
        finally:
            for fut in futures:
                fut.cancel()
        # Collect in submission order: the first failing point raises, as it would serially.
        return [r for fut in futures for r in fut.result()]
