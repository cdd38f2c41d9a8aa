"""Checked conversion of a caller's sequence of numbers to a numpy array.

``np.asarray`` reads a bool among numbers as the number it equals (``[0, True]`` is
``[0, 1]``, ``[1e-7, True]`` is ``[1e-7, 1.0]``), so a flag passed where a rank, an address,
a node index or a latency goes would be answered as rank 1 or one second. The vectorized
functions that take a Python sequence convert it here; an ndarray's dtype already says what
it holds and passes unexamined (a bool array is refused by each caller's dtype rule).
"""

import numpy as np

from ._errors import SpecError
from ._units import is_bool, is_finite, is_float, is_real, show_value

__all__ = []


def number_array(values, what):
    """``np.asarray(values)``; a TypeError naming its position when ``values`` is a sequence
    (not an ndarray) whose numbers hold a bool, a SpecError for rows of different lengths
    (numpy's own "setting an array element with a sequence ... inhomogeneous shape" named
    nothing: lookup_many, loads_grouped, interleave_target). The array's dtype is each
    caller's own rule.

    >>> number_array([0, True], "rank")
    Traceback (most recent call last):
    ...
    TypeError: rank[1] must be an integer, got rank[1]=True (a bool)
    >>> number_array([[1e-7], [np.False_]], "latencies")
    Traceback (most recent call last):
    ...
    TypeError: latencies[1][0] must be a number, got latencies[1][0]=np.False_ (a bool)
    >>> number_array((3, 4), "src").tolist()
    [3, 4]
    >>> number_array([[0, 1], [2]], "group")
    Traceback (most recent call last):
    ...
    fabric.SpecError: group must have rows of one length, got rows of different lengths
    """
    try:
        a = np.asarray(values)
    except ValueError:          # numpy (>= 1.24) refuses a ragged nesting
        raise SpecError(f"{what} must have rows of one length, got rows of different "
                        "lengths") from None
    if a.dtype.kind in "iuf" and a.ndim and a.size and not isinstance(values, np.ndarray):
        # a 1-D list is its own elements; anything else as numpy holds them, as given
        given = values if a.ndim == 1 and isinstance(values, (list, tuple)) else \
            np.asarray(values, dtype=object).ravel().tolist()
        if any(map(is_bool, given)):            # the one bool test (numpy's too)
            k = next(i for i, v in enumerate(given) if is_bool(v))
            name = what + "".join(f"[{int(i)}]" for i in np.unravel_index(k, a.shape))
            kind = "an integer" if a.dtype.kind in "iu" else "a number"
            raise TypeError(f"{name} must be {kind}, got {name}={given[k]!r} (a bool)")
    return a


def check_length(length, what, itemsize=8):
    """``length`` (an int) where an array of ``length`` items of ``itemsize`` bytes is one numpy
    can make, else a SpecError saying "``what`` is more than an array can hold": numpy refuses
    more bytes than its index type counts with a ValueError naming no parameter ("array is too
    big", "Maximum allowed size exceeded"), and a length computed past it wraps (traffic's
    ``np.repeat`` of 8 ranks x 2**62 tokens crashed the interpreter). Memory is the machine's
    own limit (a MemoryError); this is the one check of numpy's.

    >>> check_length(2**20, "experts=1048576")
    1048576
    >>> check_length(2**62, "experts=4611686018427387904")
    Traceback (most recent call last):
    ...
    fabric.SpecError: experts=4611686018427387904 is more than an array can hold (1152921504606846975 items of 8 bytes)
    """
    most = np.iinfo(np.intp).max // itemsize
    if length > most:
        raise SpecError(f"{what} is more than an array can hold ({most} items of {itemsize} "
                        "bytes)")
    return length


def integer_array(values, what, due="integers", name=None):
    """``values`` as an array of integers where integers are due (node indices, ranks,
    addresses, interleave positions, groups): a sequence holding a bool named by its position
    (:func:`number_array`, as ``name``, else ``what``), then the array's dtype, a TypeError
    "``what`` must be ``due``, got an array of dtype d" for bools, floats, text or objects
    (numpy reads ``[1.5]`` as float64, ``[True]`` as bool). An empty one of any dtype holds no item of a wrong kind: an
    empty int64 array (session 34). Its range and shape are each caller's own rule. The one
    check of an array of integers (:func:`real_array` of numbers).

    >>> integer_array([3, 4], "src").tolist(), integer_array([], "src").dtype
    ([3, 4], dtype('int64'))
    >>> integer_array(np.array([0.0, 1.0]), "group")
    Traceback (most recent call last):
    ...
    TypeError: group must be integers, got an array of dtype float64
    """
    a = number_array(values, what if name is None else name)
    if a.size == 0:
        return a.astype(np.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{what} must be {due}, got an array of dtype {a.dtype}")
    return a


def real_array(values, name, what, copy=True):
    """``values`` as an array of floats where numbers are due, else a TypeError "``what``, got
    booleans: [...]" (or complex numbers, text, values that are not numbers): numpy would read
    a bool array as 0s and 1s, a complex one by its real part. A sequence holding a bool among
    numbers is named by its position (:func:`number_array`, ``name``); Python numbers held as
    objects (Fractions) are the floats they equal. Its shape and range are each caller's own
    rule. The one check of an array of numbers (traffic matrices, latencies, probabilities,
    plotted values). ``copy=False`` returns a float ndarray given as it is.

    >>> real_array([1, 2.5], "latencies", "latencies must be seconds").tolist()
    [1.0, 2.5]
    >>> real_array(np.ones(2, dtype=bool), "latencies", "latencies must be seconds")
    Traceback (most recent call last):
    ...
    TypeError: latencies must be seconds, got booleans: array([ True,  True])
    """
    a = number_array(values, name)
    if a.dtype.kind == "O" and all(map(is_real, a.flat)):
        # Python numbers held as objects (ints, Fractions); an int no float holds (10**400)
        # raised astype's bare OverflowError
        big = next((v for v in a.flat if not (is_finite(v) or is_float(v))), None)
        if big is not None:
            raise SpecError(f"{what}, got a number beyond a float's range: {show_value(big)}")
        a = a.astype(float)
    if a.dtype.kind not in "iuf":
        kind = {"b": "booleans", "c": "complex numbers", "U": "text", "S": "text"}.get(
            a.dtype.kind, "values that are not numbers")
        raise TypeError(f"{what}, got {kind}: {show_value(values)}")
    return a.astype(float, copy=copy)


def traffic_values(matrix, n, what, name, copy=True):
    """``matrix``, a traffic matrix given as numbers (bytes from rank ``i`` to rank ``j``), as a
    new ``n x n`` array of floats: the one check of such a matrix, for
    :meth:`fabric.Router.loads_matrix`, ``analysis.link_loads``, ``analysis.throughput``,
    ``analysis.schedule`` and ``analysis.cost``'s all-to-allv (here, in the fabric layer,
    since the router takes one: DESIGN.md, fabric imports no analysis). ``what`` leads every
    message (it names the argument and its shape), each followed by ", got ..."; ``name`` is
    the argument's name, for an entry named by position; ``copy=False`` returns an ndarray
    of floats or ints given as it is (no second n x n array: a caller that reads it in
    blocks converts each block).

    Numbers only (ints, floats, and Python numbers held as objects such as Fractions):
    booleans (numpy reads them as 1-byte pairs; one among numbers in a sequence too:
    :func:`number_array`), complex numbers (numpy keeps the real part), text
    and other objects are a TypeError; rows of different lengths, another shape, and an entry
    that is not a finite byte count >= 0 a SpecError (a ValueError).

    >>> traffic_values([[0, 1], [2, 0]], 2, "traffic matrix (2 x 2)", "matrix").tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    >>> traffic_values([[True, False], [False, True]], 2, "traffic matrix (2 x 2)", "matrix")
    Traceback (most recent call last):
    ...
    TypeError: traffic matrix (2 x 2), got booleans: [[True, False], [False, True]]
    >>> traffic_values([[0, 1], [True, 0]], 2, "traffic matrix (2 x 2)", "matrix")
    Traceback (most recent call last):
    ...
    TypeError: matrix[1][0] must be an integer, got matrix[1][0]=True (a bool)
    """
    if not copy and isinstance(matrix, np.ndarray) and matrix.dtype.kind in "iu":
        M = matrix      # (real_array would make it an n x n float array: the matrix again)
    else:
        # a new array unless copy=False: callers may write into it (ragged rows: number_array)
        M = real_array(matrix, name, what, copy=copy)
    if M.shape != (n, n):
        raise SpecError(f"{what}, got an array of shape {M.shape}")
    # two reductions, no n x n temporaries: nan makes min() nan (not >= 0), inf max() inf
    if M.size and not (M.min() >= 0 and np.isfinite(M.max())):
        i, j = np.argwhere(~np.isfinite(M) | (M < 0))[0]
        raise SpecError(f"{what}, got entries that are not finite byte counts >= 0 "
                        f"([{i}, {j}] = {float(M[i, j])!r})")
    return M
