"""Closed-form (alpha-beta-gamma) costs of collective algorithms, and their lower bounds.

The formulas are those of Thakur, Rabenseifner and Gropp, "Optimization of
Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, as printed
in the MPICH source comments (pmodels/mpich, ``src/mpi/coll/*/``) and
collected in docs/sources.md s.2. The lower bounds are those of Chan,
Heimlich, Purkayastha and van de Geijn, "Collective communication: theory,
practice, and experience", CCPE 19(13), 2007.

Model: ``p`` ranks; a message of ``m`` bytes between two ranks costs
``alpha + m * beta``; reducing ``m`` bytes costs ``m * gamma``. Every term adds;
nothing overlaps. A rank sends one message and receives one message at a
time (the single-port, full-duplex model of both papers).

``n`` is, as in docs/sources.md s.2: the full vector per rank for broadcast, reduce,
all-reduce and reduce-scatter (its input); the full gathered result for
all-gather; and for all-to-all the total a rank sends to all *other* ranks.
The nccl-tests "size" of all-to-all is the whole per-rank buffer, own block
included: ``n = size * (p - 1) / p``.

MPICH's all-to-all comments use two conventions: "pairwise" is exact with ``n``
the data for others; "bruck" (``(n/2) lg p beta``) is exact for powers of two
when ``n`` is the whole buffer, own block included (each round moves half of it).

One rank moves nothing: every formula and bound is 0 for ``p = 1``.

``lg p`` in the table is ``log2 p`` as printed; the lower bounds use
``ceil(log2 p)`` as Chan et al. print them. The table is exact for powers of
two. For other ``p`` the algorithms take ``ceil(log2 p)`` rounds (that is what
the on-fabric schedules of :mod:`analysis._schedules` do), so a formula read
literally can sit below the bound's latency term there.

Examples
--------
>>> closed_form("all-reduce", "ring", 8, 1e6, alpha=1e-6, beta=1e-9)
0.001764
>>> closed_form("all-gather", "lower-bound", 8, 1e6, alpha=1e-6, beta=1e-9)
0.000878
"""

import math

from fabric import SpecError
from fabric._units import check_count, check_number, text_of, unknown_fault

__all__ = [
    "OPERATIONS",
    "busbw_factor",
    "closed_form",
    "closed_form_algorithms",
    "normalize_algorithm",
    "normalize_op",
]

#: The collective operations, in the nccl-tests sense (size = per-rank buffer).
OPERATIONS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce",
              "all-to-all", "all-to-allv", "send-recv")

_OP_ALIASES = {
    "allreduce": "all-reduce", "allgather": "all-gather", "reducescatter": "reduce-scatter",
    "bcast": "broadcast", "alltoall": "all-to-all", "alltoallv": "all-to-allv",
    "sendrecv": "send-recv", "p2p": "send-recv", "point-to-point": "send-recv",
}

_ALGO_ALIASES = {
    "binomial-tree": "binomial",
    "halving-doubling": "rabenseifner",
    "recursive-halving-doubling": "rabenseifner",
    "dbt": "double-binary-tree",
    "tree": "double-binary-tree",
    "nvls": "in-switch",
    "in-network": "in-switch",
    "lowerbound": "lower-bound",
    "direct": "one-shot",
    "p2p": "point-to-point",
    "sendrecv": "point-to-point",
}


def _key(text, what):
    return text_of(text, what).strip().lower().replace("_", "-").replace(" ", "-")


def normalize_op(op):
    """Return the canonical name of operation ``op`` (``"allreduce"`` -> ``"all-reduce"``).

    Parameters
    ----------
    op : str
        An operation's name, any case, ``-`` or ``_`` between words or none
        (``"AllReduce"``, ``"all_reduce"``).

    Returns
    -------
    str

    Raises
    ------
    SpecError
        If ``op`` is not one of :data:`OPERATIONS`.

    Examples
    --------
    >>> normalize_op("AllReduce")
    'all-reduce'
    """
    key = _key(op, "op")
    key = _OP_ALIASES.get(key.replace("-", ""), key)
    if key not in OPERATIONS:
        raise SpecError(unknown_fault(op, "collective operation", OPERATIONS))
    return key


def normalize_algorithm(algorithm):
    """Return the canonical spelling of an algorithm name (aliases resolved).

    Only the spelling is checked here; whether the algorithm exists for an
    operation is checked where it is used.

    Parameters
    ----------
    algorithm : str
        An algorithm's name or alias, any case.

    Returns
    -------
    str

    Examples
    --------
    >>> normalize_algorithm("Halving_Doubling")
    'rabenseifner'
    """
    key = _key(algorithm, "algorithm")
    return _ALGO_ALIASES.get(key, key)


def _rounds(p):
    # ceil(log2 p) without floating point: the rounds of a binomial / doubling algorithm.
    return (p - 1).bit_length()


# Each entry: (op, algorithm) -> f(p, n, a, b, g, lg) with lg = log2 p.
# Comments quote docs/sources.md s.2 (Thakur, Rabenseifner, Gropp 2005).
_TABLE = {
    # lg p alpha + n lg p beta
    ("broadcast", "binomial"): lambda p, n, a, b, g, lg: lg * a + n * lg * b,
    # 2 lg p alpha + 2 n (p-1)/p beta
    ("broadcast", "scatter-recursive-doubling"):
        lambda p, n, a, b, g, lg: 2 * lg * a + 2 * n * (p - 1) / p * b,
    # (lg p + p - 1) alpha + 2 n (p-1)/p beta
    ("broadcast", "scatter-ring"):
        lambda p, n, a, b, g, lg: (lg + p - 1) * a + 2 * n * (p - 1) / p * b,
    # lg p (alpha + n beta + n gamma)
    ("reduce", "binomial"): lambda p, n, a, b, g, lg: lg * (a + n * b + n * g),
    # (p-1) alpha + n (p-1)/p beta
    ("all-gather", "ring"): lambda p, n, a, b, g, lg: (p - 1) * a + n * (p - 1) / p * b,
    # lg p alpha + n (p-1)/p beta
    ("all-gather", "recursive-doubling"):
        lambda p, n, a, b, g, lg: lg * a + n * (p - 1) / p * b,
    ("all-gather", "bruck"): lambda p, n, a, b, g, lg: lg * a + n * (p - 1) / p * b,
    # lg p alpha + n (p-1)/p (beta + gamma)
    ("reduce-scatter", "recursive-halving"):
        lambda p, n, a, b, g, lg: lg * a + n * (p - 1) / p * (b + g),
    # (p-1) alpha + n (p-1)/p (beta + gamma)
    ("reduce-scatter", "pairwise"):
        lambda p, n, a, b, g, lg: (p - 1) * a + n * (p - 1) / p * (b + g),
    # lg p (alpha + n beta + n gamma)
    ("all-reduce", "recursive-doubling"): lambda p, n, a, b, g, lg: lg * (a + n * b + n * g),
    # 2 lg p alpha + 2 n (p-1)/p beta + n (p-1)/p gamma
    ("all-reduce", "rabenseifner"):
        lambda p, n, a, b, g, lg: 2 * lg * a + 2 * n * (p - 1) / p * b + n * (p - 1) / p * g,
    # 2 (p-1) alpha + 2 n (p-1)/p beta + n (p-1)/p gamma
    ("all-reduce", "ring"):
        lambda p, n, a, b, g, lg: (2 * (p - 1) * a + 2 * n * (p - 1) / p * b
                                   + n * (p - 1) / p * g),
    # lg p alpha + (n/2) lg p beta
    ("all-to-all", "bruck"): lambda p, n, a, b, g, lg: lg * a + n / 2 * lg * b,
    # (p-1) alpha + n beta
    ("all-to-all", "pairwise"): lambda p, n, a, b, g, lg: (p - 1) * a + n * b,
}

# Chan et al. 2007, table of lower bounds (single-port, full-duplex model). The
# all-to-all bound is not in that paper: it follows by the same argument (every
# rank must inject its n bytes for others; information from one rank reaches at
# most 2^k ranks after k rounds), and is marked as derived.
#
# The all-to-all bound here charges (p-1)/p n of injection: a valid bound both when n
# counts only the data for others (as for "pairwise") and when it counts the whole
# buffer (as MPICH's "bruck" formula does), so neither formula of the table beats it.
_LOWER = {
    "broadcast": lambda p, n, a, b, g, lg: lg * a + n * b,
    "reduce": lambda p, n, a, b, g, lg: lg * a + n * b + (p - 1) / p * n * g,
    "all-gather": lambda p, n, a, b, g, lg: lg * a + (p - 1) / p * n * b,
    "reduce-scatter": lambda p, n, a, b, g, lg: lg * a + (p - 1) / p * n * (b + g),
    "all-reduce": lambda p, n, a, b, g, lg: lg * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g,
    "all-to-all": lambda p, n, a, b, g, lg: lg * a + (p - 1) / p * n * b,  # derived
}


def closed_form_algorithms(op=None):
    """The algorithms :func:`closed_form` knows, for ``op`` or for every operation.

    Parameters
    ----------
    op : str, optional
        An operation (:func:`normalize_op` reads it); None: every operation.

    Returns
    -------
    tuple of str, or dict of str to tuple of str
        ``"lower-bound"`` is listed wherever a bound exists.

    Examples
    --------
    >>> closed_form_algorithms("all-to-all")
    ('bruck', 'pairwise', 'lower-bound')
    """
    if op is None:
        return {o: closed_form_algorithms(o) for o in OPERATIONS
                if o not in ("all-to-allv", "send-recv")}
    op = normalize_op(op)
    names = tuple(a for (o, a) in _TABLE if o == op)
    return names + (("lower-bound",) if op in _LOWER else ())


def _check_p(p):
    return check_count(p, "p", 1, "an integer number of ranks >= 1")


def closed_form(op, algorithm, p, nbytes, alpha, beta, gamma=0.0):
    """Time in seconds of a collective by its published alpha-beta-gamma formula.

    Parameters
    ----------
    op : str
        ``"broadcast"``, ``"reduce"``, ``"all-gather"``, ``"reduce-scatter"``,
        ``"all-reduce"`` or ``"all-to-all"``.
    algorithm : str
        One of :func:`closed_form_algorithms` for ``op``, or ``"lower-bound"``
        for the Chan et al. bound.
    p : int
        Ranks, >= 1.
    nbytes : float
        ``n`` in the sense of the module docstring, > 0 bytes.
    alpha : float
        Seconds per message, >= 0.
    beta : float
        Seconds per byte, >= 0.
    gamma : float, default 0
        Seconds per byte reduced, >= 0.

    Returns
    -------
    float
        Seconds. Every term adds (no overlap).

    Raises
    ------
    SpecError
        Unknown operation, or an algorithm with no formula for that operation.
    ValueError, TypeError
        A size, count or rate outside its domain.

    Examples
    --------
    >>> closed_form("all-reduce", "rabenseifner", 4, 1000, 1.0, 0.01, 0.001)
    19.75
    >>> closed_form("all-to-all", "pairwise", 4, 300, 1.0, 0.01)
    6.0
    """
    op = normalize_op(op)
    algorithm = normalize_algorithm(algorithm)
    p = _check_p(p)
    n = check_number("nbytes", nbytes, 0, strict=True)
    a, b, g = check_number("alpha", alpha), check_number("beta", beta), \
        check_number("gamma", gamma)
    if algorithm == "lower-bound":
        if op not in _LOWER:
            raise SpecError(f"no lower bound is known for op={op!r}")
        formula = _LOWER[op]
    else:
        formula = _TABLE.get((op, algorithm))
        if formula is None:
            known = closed_form_algorithms(op) if op != "all-to-allv" else ()
            raise SpecError(f"no closed form for {op} in the MPICH table (docs/sources.md "
                            "s.2): " + unknown_fault(algorithm, "algorithm", known))
    if p == 1:
        return 0.0  # one rank: nothing moves, nothing is reduced
    lg = _rounds(p) if algorithm == "lower-bound" else math.log2(p)
    return float(formula(p, n, a, b, g, lg))


def busbw_factor(op, p):
    """The nccl-tests factor from algorithm bandwidth to bus bandwidth.

    Source: NVIDIA/nccl-tests, doc/PERFORMANCE.md: all-reduce ``2(p-1)/p``;
    all-gather, reduce-scatter and all-to-all ``(p-1)/p``; broadcast and reduce
    ``1``. All-to-allv uses the all-to-all factor; send-recv ``1`` (nccl-tests
    ``sendrecv_perf``: bus bandwidth = algorithm bandwidth).

    Parameters
    ----------
    op : str
        An operation (:func:`normalize_op` reads it).
    p : int
        Ranks, >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> busbw_factor("all-reduce", 8)
    1.75
    """
    op = normalize_op(op)
    p = _check_p(p)
    if op == "all-reduce":
        return 2 * (p - 1) / p
    if op in ("broadcast", "reduce", "send-recv"):
        return 1.0
    return (p - 1) / p
