"""Checked conversion of a caller's sequence of numbers to a numpy array.

``np.asarray`` reads a bool among numbers as the number it equals (``[0, True]`` is
``[0, 1]``, ``[1e-7, True]`` is ``[1e-7, 1.0]``), so a flag passed where a rank, an address,
a node index or a latency goes would be answered as rank 1 or one second. The vectorized
functions that take a Python sequence convert it here; an ndarray's dtype already says what
it holds and passes unexamined (a bool array is refused by each caller's dtype rule).
"""

import numpy as np

from ._errors import SpecError
from ._units import is_bool

__all__ = []


def number_array(values, what):
    """``np.asarray(values)``; a TypeError naming its position when ``values`` is a sequence
    (not an ndarray) whose numbers hold a bool. The array's dtype is each caller's own rule.

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
    """
    a = np.asarray(values)
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
