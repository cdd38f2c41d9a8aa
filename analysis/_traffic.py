"""Traffic matrices and the link loads they put on a fabric.

A :class:`TrafficMatrix` says how many bytes each endpoint (rank) sends to each
other endpoint. :func:`link_loads` routes it by the fabric's policy (ECMP split
evenly over the equal-cost paths the policy uses) into bytes per directed link,
and the time to drain it:

    drain time = max( max over links of load / bandwidth,
                      max over endpoints of bytes sent / injection bandwidth,
                      max over endpoints of bytes received / ejection bandwidth )

where an endpoint's injection (ejection) bandwidth is the sum of the bandwidths
of its links. Every flow is assumed to progress at once and links to be shared
fairly; the result is the time the busiest resource needs, a lower bound on
any schedule's time (a fluid model: no latency, no protocol overhead).

Generators (:data:`TRAFFIC`): ``all-to-all`` (uniform), ``permutation`` (a
random permutation with a seed), ``shift``, ``hotspot`` and ``moe`` (tokens sent
to the top-k of E experts placed on chips, with a skew).

Examples
--------
>>> import topologies
>>> f = topologies.build("torus:4x4")
>>> t = traffic(f, "all-to-all", nbytes=1000)
>>> ll = link_loads(f, t)
>>> ll.max_load, round(ll.drain_time * 1e9, 1)   # 16 x 32 hops x 1000 B over 64 links
(8000.0, 125.0)
"""

import dataclasses

import numpy as np

from fabric import NodeError, SpecError
from fabric._arrays import check_length, traffic_values
from fabric._fabric_arg import fabric_arg
from fabric._units import (
    check_choice,
    check_count,
    check_fraction,
    check_number,
    is_int,
    items_of,
    kind_error,
    show_value,
    text_of,
    unknown_fault,
)

__all__ = ["TRAFFIC", "LinkLoads", "TrafficMatrix", "link_loads",
           "traffic"]

TRAFFIC = ("all-to-all", "permutation", "shift", "hotspot", "moe")


@dataclasses.dataclass(frozen=True, eq=False)
class TrafficMatrix:
    """Bytes from rank ``i`` to rank ``j``: ``matrix[i, j]`` (the diagonal is ignored).

    Either ``data`` holds the dense ``n x n`` array, or ``fill`` gives every
    off-diagonal entry the same value (uniform all-to-all, stored lazily so
    that 8,192 endpoints need no 512 MiB array).

    Attributes
    ----------
    name : str
    n : int
    data : ndarray or None
    fill : float
    """

    name: str
    n: int
    data: np.ndarray = None
    fill: float = 0.0

    def __post_init__(self):
        # checked as every other reader of a traffic matrix checks one (traffic_values): a
        # bool array was read as 1-byte pairs, a wrong shape failed later with an IndexError
        text_of(self.name, "name")
        object.__setattr__(self, "n", check_count(self.n, "n", 1))
        if self.data is not None:
            object.__setattr__(self, "data", traffic_values(
                self.data, self.n, f"data must be a traffic matrix ({self.n} x {self.n} bytes)",
                "data", copy=False))
        else:
            check_number("fill", self.fill, 0, " bytes")

    @property
    def shape(self):
        return (self.n, self.n)

    def rows(self, start, stop):
        """Rows ``start:stop`` as a dense array, diagonal zero."""
        if self.data is not None:
            block = np.array(self.data[start:stop], dtype=float)
        else:
            block = np.full((stop - start, self.n), float(self.fill))
        k = np.arange(start, stop)
        block[k - start, k] = 0.0
        return block

    def dense(self):
        """The whole matrix as a dense array (diagonal zero)."""
        return self.rows(0, self.n)

    @property
    def sent(self):
        """Bytes each rank sends, shape (n,)."""
        if self.data is None:
            return np.full(self.n, self.fill * (self.n - 1))
        return self.dense().sum(axis=1)

    @property
    def received(self):
        """Bytes each rank receives, shape (n,)."""
        if self.data is None:
            return np.full(self.n, self.fill * (self.n - 1))
        return self.dense().sum(axis=0)

    @property
    def total(self):
        """Total bytes."""
        return float(self.sent.sum())


def _count(fabric_or_n):
    if hasattr(fabric_or_n, "n_endpoints"):
        n = fabric_or_n.n_endpoints
    else:       # True, 8.0 or '8' asked for .n_endpoints (an AttributeError naming nothing)
        n = check_count(fabric_or_n, "fabric_or_n", None, "a Fabric or a number of endpoints")
    if n < 2:
        raise SpecError(f"traffic needs at least 2 endpoints, got {n}")
    return n


_MAX_BYTES = float(2**63)


def _hot_positions(fabric_or_n, n, hot):
    """``hot`` (one value or a sequence) -> (matrix positions, the ranks a label shows, or
    None for positions given as ``n``'s), the one check of the hotspot's ranks: an item of
    another kind (a float, a bool, numpy's too, a list; with ``n``, a name) is a TypeError,
    an empty or out-of-range ``hot`` a NodeError, each quoting ``hot`` through show_value.

    With a fabric the matrix runs over the live endpoints in rank order, so on a degraded
    fabric a rank is not its position: rank 3 of a torus without chip3 has failed
    (NodeError), and rank 15 is the last position of 15.
    """
    items = items_of(hot)
    fabric = fabric_or_n if hasattr(fabric_or_n, "endpoints") else None
    due = "a rank (an integer)" + (" or a chip's name" if fabric is not None else "")
    bare = items is None
    items = [hot] if bare else items
    for i, x in enumerate(items):
        if not (is_int(x) or fabric is not None and isinstance(x, str)):
            raise kind_error(x, *(("hot", f"{due}, or a sequence of them") if bare
                                  else (f"hot[{i}]", due)))
    if not items or fabric is None and not all(0 <= x < n for x in items):
        raise NodeError(f"hot ranks must lie in 0..{n - 1}, got {show_value(hot)}")
    pos = None if fabric is None else {c: i for i, c in enumerate(fabric.endpoints)}
    out, seen = [], {}
    for x in items:
        node = int(x) if fabric is None else fabric.node(x)
        if pos is not None and node not in pos:
            raise NodeError(f"hot rank {show_value(x)} is {show_value(node)}, which is not a "
                            "chip")
        if node in seen:        # a cell written twice kept one share: hot=[1, 1] lost bytes
            how = "" if seen[node] == x else f" (as {show_value(seen[node])} and {show_value(x)})"
            raise NodeError(f"hot lists {show_value(node)} twice{how}; each hot rank takes its "
                            "share once")
        seen[node] = x
        out.append(node if pos is None else pos[node])
    return (np.array(out, dtype=np.int64),
            None if fabric is None else [fabric.rank_of[fabric.endpoints[i]] for i in out])


def traffic(fabric_or_n, name, nbytes=1.0, *, seed=0, shift=1, hot=None, fraction=0.5,
            experts=None, top_k=8, tokens=64, skew=0.0, placement="round-robin"):
    """Build a named traffic matrix over the endpoints of a fabric (or ``n`` ranks).

    Parameters
    ----------
    fabric_or_n : Fabric or int
    name : str
        One of :data:`TRAFFIC`:

        ``"all-to-all"``
            every rank sends ``nbytes`` to every other rank.
        ``"permutation"``
            rank ``i`` sends ``nbytes`` to ``p[i]`` for a random permutation ``p``
            (``numpy.random.default_rng(seed).permutation``); a fixed point sends nothing.
        ``"shift"``
            rank ``i`` sends ``nbytes`` to rank ``(i + shift) % n``.
        ``"hotspot"``
            each rank sends ``nbytes`` in all: ``fraction`` of it split evenly
            over the ranks in ``hot`` (other than itself), the rest uniformly
            over every other rank. With a fabric, ``hot`` holds its stable ranks
            or chip names (on a degraded fabric a failed one is an error); with
            ``n``, positions ``0..n-1``. Default (``hot=None``): rank 0.
        ``"moe"``
            each rank holds ``tokens`` tokens; each token goes to ``top_k``
            distinct experts out of ``experts`` (default ``8 * n``), drawn without replacement with probability proportional to
            ``(e + 1) ** -skew`` (``skew=0``: uniform; larger: a few hot experts),
            sampled with ``seed``. ``nbytes`` is one token's bytes. Expert ``e``
            lives on rank ``e % n`` (``placement="round-robin"``) or ``e // (E/n)``
            (``"blocked"``); a token sent to an expert on its own rank moves no bytes.
    nbytes : float
        Bytes per pair (all-to-all, permutation, shift), per source (hotspot),
        or per token (moe); > 0 and at most 2**63.
    seed : int
        The random generator's seed (permutation, moe), >= 0.
    shift : int
        The shift's distance in ranks (any integer; taken modulo ``n``).
    hot : int, str or sequence of them, optional
        The hotspot's ranks (with a fabric, its ranks or chip names); default rank 0.
    fraction : float
        The hotspot's share of each rank's bytes, in [0, 1].
    experts : int, optional
        Routed experts (moe), >= 1; default ``8 * n``.
    top_k : int
        Experts per token (moe), >= 1.
    tokens : int
        Tokens per rank (moe), >= 1.
    skew : float
        The expert popularity's exponent (moe), >= 0.
    placement : {"round-robin", "blocked"}
        Which rank holds each expert (moe).

    Every keyword is checked whether the pattern uses it or not (a ``fraction`` of nan
    given with ``"shift"`` is a :class:`~fabric.SpecError`, not ignored).

    Returns
    -------
    TrafficMatrix

    Examples
    --------
    >>> traffic(4, "shift", 10.0, shift=1).dense()[0].tolist()
    [0.0, 10.0, 0.0, 0.0]
    >>> m = traffic(16, "moe", 1.0, experts=32, top_k=2, tokens=10, seed=1)
    >>> m.total <= 16 * 10 * 2
    True
    >>> traffic(4, "tornado")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown traffic 'tornado'; known: all-to-all, hotspot, moe, permutation, shift
    """
    if text_of(name, "traffic name") not in TRAFFIC:     # a kind first (TypeError), then the set
        raise SpecError(unknown_fault(name, "traffic", TRAFFIC))
    n = _count(fabric_or_n)
    nbytes = check_number("nbytes", nbytes, 0, strict=True)
    if nbytes > _MAX_BYTES:
        # the matrix's sums and link loads must stay finite floats
        raise SpecError(f"nbytes must be at most 2**63 bytes, got {nbytes!r}")
    seed = check_count(seed, "seed", 0)
    # every keyword is checked whether the pattern uses it or not: a nan fraction or a -1
    # top_k given with another pattern is a mistake, not a value to ignore (session 34)
    shift = check_count(shift, "shift", None)
    fraction = check_fraction("fraction", fraction, 0, 1)
    skew = check_number("skew", skew, 0)
    top_k, tokens = check_count(top_k, "top_k", 1), check_count(tokens, "tokens", 1)
    if experts is not None:
        experts = check_count(experts, "experts", 1)
    check_choice(placement, "placement", ("round-robin", "blocked"))
    if hot is not None or name == "hotspot":     # hot too, if given (default: rank 0)
        hot, shown = _hot_positions(fabric_or_n, n, (0,) if hot is None else hot)
    if name == "all-to-all":
        return TrafficMatrix("all-to-all", n, fill=nbytes)
    check_length(n * n, f"a traffic matrix of {n} endpoints")
    M = np.zeros((n, n))
    if name == "permutation":
        p = np.random.default_rng(seed).permutation(n)
        M[np.arange(n), p] = nbytes
        label = f"permutation(seed={seed})"
    elif name == "shift":
        # reduced first: numpy holds no shift of 2**63 (an OverflowError naming nothing)
        M[np.arange(n), (np.arange(n) + shift % n) % n] = nbytes
        label = f"shift({shift})"
    elif name == "hotspot":
        M[:] = nbytes * (1 - fraction) / (n - 1)
        for i in range(n):
            targets = hot[hot != i]
            if not len(targets):  # the only hot rank spreads its share over everyone else
                targets = np.delete(np.arange(n), i)
            M[i, targets] += nbytes * fraction / len(targets)
        label = f"hotspot({hot.tolist() if shown is None else shown}, {fraction})"
    else:
        M, label = _moe(n, nbytes, seed, experts, top_k, tokens, skew, placement)
    np.fill_diagonal(M, 0.0)
    return TrafficMatrix(label, n, data=M)


def _moe(n, nbytes, seed, experts, top_k, tokens, skew, placement):
    # the checked Python ints (traffic's checks): np.int64 tokens x n wrapped past
    # check_length, np.uint64 experts made float indices (an IndexError)
    E = 8 * n if experts is None else experts
    if top_k > E:
        raise SpecError(f"top_k={top_k} must not exceed experts={E}")
    check_length(E, f"experts={E}")                      # a weight and a home per expert
    check_length(n * tokens, f"tokens={tokens} on each of {n} ranks")     # one row a token
    if placement == "round-robin":
        home = np.arange(E) % n
    elif placement == "blocked":
        if E % n:
            raise SpecError(f"blocked placement needs experts ({E}) divisible by ranks ({n})")
        home = np.arange(E) // (E // n)
    rng = np.random.default_rng(seed)
    logp = -skew * np.log(np.arange(1, E + 1))
    M = np.zeros((n, n))
    # Gumbel top-k: the k largest of log p + Gumbel noise are a draw of k distinct experts
    # without replacement, each step proportional to p (Vieira 2014; Kool et al., ICML 2019).
    step = max(1, (1 << 22) // E)
    src = np.repeat(np.arange(n), tokens)
    for i in range(0, len(src), step):
        s = src[i:i + step]
        g = logp[None, :] + rng.gumbel(size=(len(s), E))
        top = np.argpartition(-g, top_k - 1, axis=1)[:, :top_k]
        dst = home[top]
        np.add.at(M, (np.repeat(s, top_k), dst.ravel()), nbytes)
    label = f"moe(E={E}, top_k={top_k}, tokens={tokens}, skew={skew})"
    return M, label


@dataclasses.dataclass(frozen=True, eq=False)
class LinkLoads:
    """Link loads of a traffic matrix on a fabric, and the time to drain it.

    Attributes
    ----------
    traffic : str
    loads : ndarray, shape (2E,)
        Bytes per directed link (contract numbering: edge ``e`` -> links ``2e``, ``2e+1``).
    link_time : ndarray, shape (2E,)
        Seconds: ``loads / bandwidth``.
    injection_time, ejection_time : ndarray, shape (n,)
        Seconds per rank: bytes sent (received) over its links' total bandwidth.
    drain_time : float
        Max of the link and endpoint times.
    bottleneck : tuple
        ``("link", u, v)`` or ``("inject", rank)`` / ``("eject", rank)``: what sets the drain time.
    max_load : float
        Bytes on the busiest directed link.
    """

    traffic: str
    loads: np.ndarray
    link_time: np.ndarray
    injection_time: np.ndarray
    ejection_time: np.ndarray
    drain_time: float
    bottleneck: tuple
    max_load: float


def link_loads(fabric, matrix):
    """Route a traffic matrix on ``fabric`` and return its :class:`LinkLoads`.

    Parameters
    ----------
    fabric : Fabric
        Any fabric, degraded ones included (``fabric.without(...)``).
    matrix : TrafficMatrix or array_like
        ``n x n`` bytes between ranks (``n = fabric.n_endpoints``).

    Raises
    ------
    ValueError
        If the matrix has the wrong shape or negative entries.
    RoutingError
        If a pair with traffic has no path.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("torus:4x4")
    >>> ll = link_loads(f, traffic(f, "all-to-all", 2**20))
    >>> ll.drain_time                    # seconds, under the fabric's routing
    0.000131072
    """
    fabric = fabric_arg(fabric)
    n = fabric.n_endpoints
    if not isinstance(matrix, TrafficMatrix):
        arr = traffic_values(matrix, n,
                             f"matrix must be a traffic matrix ({n} x {n} bytes for {fabric.name})",
                             "matrix")
        matrix = TrafficMatrix("matrix", n, data=arr)
    elif matrix.n != n:
        raise SpecError(f"traffic {matrix.name!r} is for {matrix.n} ranks, {fabric.name} has {n}")
    r = fabric.router
    if matrix.data is None:  # uniform: from the fabric's symmetry where it has one
        loads = r.loads_all_to_all(matrix.fill)
    else:
        loads = r.loads_matrix(matrix)
    link_time = loads / r.link_bandwidth
    ep = fabric.endpoint_indices
    inj_bw = np.bincount(r.link_tail, weights=r.link_bandwidth, minlength=len(fabric.nodes))[ep]
    ej_bw = np.bincount(r.link_head, weights=r.link_bandwidth, minlength=len(fabric.nodes))[ep]
    inj = matrix.sent / inj_bw
    ej = matrix.received / ej_bw
    cands = [(float(link_time.max()) if len(link_time) else 0.0, "link"),
             (float(inj.max()), "inject"), (float(ej.max()), "eject")]
    drain, kind = max(cands, key=lambda c: c[0])
    if kind == "link":
        k = int(np.argmax(link_time))
        bottleneck = ("link",) + r.link_name(k)
    elif kind == "inject":
        bottleneck = ("inject", int(np.argmax(inj)))
    else:
        bottleneck = ("eject", int(np.argmax(ej)))
    return LinkLoads(traffic=matrix.name, loads=loads, link_time=link_time, injection_time=inj,
                     ejection_time=ej, drain_time=drain, bottleneck=bottleneck,
                     max_load=float(loads.max()) if len(loads) else 0.0)
