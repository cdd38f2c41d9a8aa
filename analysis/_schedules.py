"""Collective algorithms as schedules: steps of flows, stored compactly.

A :class:`Schedule` is what an algorithm does, independent of any fabric's
links: a sequence of :class:`Step` objects, each a set of flows ``src -> dst``
that run at the same time, and the bytes the busiest rank reduces in that step.
Flow sizes are stored as *fractions of the operation's size* ``n`` (bytes per
byte), so one schedule serves every size; a step the algorithm repeats
identically (a ring's ``p - 1`` steps) is stored once with a ``repeat`` count,
so a ring over 16,384 ranks is two steps.

Participants are numbered ``0 .. p-1`` (positions in the rank group) and,
for in-switch algorithms, ``p, p+1, ...`` for the switches of
:attr:`Schedule.switches`.

Sizes follow nccl-tests: ``n`` is the per-rank buffer; for all-gather the
gathered output; for all-to-all the whole per-rank send buffer, own block
included (block ``n / p`` to every rank). For all-to-allv the schedule is
built from a traffic matrix in bytes and ``n`` is 1.

Pipelined schedules (``Schedule.pipeline = D``) hold one step that moves one
chunk; with ``k`` chunks the step runs ``k + D`` times with flows ``1/k`` as
large (``D`` stages fill and drain the pipeline). The evaluator chooses ``k``.

Sources of the algorithms: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (ring,
recursive doubling and halving, Rabenseifner, Bruck, pairwise, binomial,
scatter-allgather broadcast); Bruck et al., IEEE TPDS 1997 (Bruck); Sanders,
Speck, Träff, Parallel Computing 2009 and NCCL's ``src/graph/trees.cc`` (double
binary tree); NCCL's channels (several rings at once, each leaving a server
from a different GPU); MPICH's "scattered" all-to-all (every rank posts all
its sends at once: the flows of one-shot, as messages); one-shot / two-shot
over symmetric memory as in TensorRT-LLM's custom all-reduce and NVSHMEM-style
collectives (each rank stores directly into its peers' symmetric buffers);
ASTRA-sim's hierarchical per-dimension scheme (docs/sources.md s.2); NVLink
SHARP's ``multimem.ld_reduce`` / ``multimem.st`` data flow (NVIDIA/nccl issues
828, 1506, 2072).

Where an algorithm applies:

* power-of-two ranks only: recursive doubling, recursive halving, Rabenseifner,
  scatter + recursive-doubling broadcast;
* ``hierarchical``: the whole grid of a hypermesh / torus / mesh (per
  dimension of its :class:`fabric.Grid` structure), or a group spread evenly over two or
  more host domains (inside each host, then across hosts, ``fabric.domains``);
* ``in-switch``: a switch whose node attribute ``reduction`` is true (the
  builders set it for NVSwitch-class switches) linked to every rank of the
  group; see :func:`in_switch_planes`;
* ``one-shot``, ``two-shot``, ``in-switch``: a load/store transport (checked by
  :func:`analysis.cost`).

Examples
--------
>>> s = schedule("all-reduce", "ring", 16384)
>>> len(s.steps), [st.repeat for st in s.steps]
(2, [16383, 16383])
>>> s.bytes_sent(1.0)                  # per rank: 2 n (p-1)/p
1.999877929688
"""

import dataclasses
import math

import numpy as np

from fabric import Grid, NodeError, SpecError
from fabric._arrays import check_length, traffic_values
from fabric._fabric_arg import fabric_arg
from fabric._failures import require_joined
from fabric._units import check_count, sequence_of, show_value, unknown_fault

from ._closed_form import normalize_algorithm, normalize_op

__all__ = [
    "ALGORITHMS",
    "NotApplicableError",
    "Schedule",
    "Step",
    "in_switch_planes",
    "register_algorithm",
    "schedule",
]

#: Algorithms per operation (``"auto"`` chooses among these).
ALGORITHMS = {
    "all-reduce": ("ring", "double-binary-tree", "binomial", "recursive-doubling",
                   "rabenseifner", "one-shot", "two-shot", "hierarchical", "in-switch",
                   "multi-ring", "multi-dimensional", "multi-dimensional-pipelined", "swing"),
    "all-gather": ("ring", "recursive-doubling", "bruck", "one-shot", "hierarchical",
                   "in-switch", "multi-ring", "multi-dimensional", "swing"),
    "reduce-scatter": ("ring", "recursive-halving", "pairwise", "one-shot", "hierarchical",
                       "in-switch", "multi-ring", "multi-dimensional", "swing"),
    "broadcast": ("binomial", "scatter-recursive-doubling", "scatter-ring",
                  "double-binary-tree", "one-shot", "in-switch", "multi-ring"),
    "reduce": ("binomial", "double-binary-tree", "one-shot", "in-switch", "multi-ring"),
    "all-to-all": ("pairwise", "bruck", "scattered", "one-shot", "hierarchical",
                   "multi-dimensional"),
    "all-to-allv": ("pairwise", "scattered", "one-shot"),
    "send-recv": ("point-to-point",),
}

#: Builders of algorithms defined in other modules, by name: ``f(op, p, fabric, nodes)``
#: returning ``(steps, pipeline)`` (see :func:`register_algorithm`). Filled when
#: ``analysis`` is imported.
_REGISTERED = {}


def register_algorithm(name, builder):
    """Let :func:`schedule` build ``name`` with ``builder(op, p, fabric, nodes)``.

    The builder returns ``(steps, pipeline)``: a tuple of :class:`Step` and the
    fill/drain stages of a pipelined schedule (None if not pipelined).

    For algorithms that live in their own module (the fabric-searching ones of
    :mod:`analysis._schedules_multi`); the name must already be listed in
    :data:`ALGORITHMS` for the operations it serves. The builder raises
    :class:`NotApplicableError` where it does not apply.

    Parameters
    ----------
    name : str
        The algorithm's name, as :data:`ALGORITHMS` lists it.
    builder : callable
        ``builder(op, p, fabric, nodes) -> (steps, pipeline)``.

    Raises
    ------
    SpecError
        For a name :data:`ALGORITHMS` does not list (nothing is registered).

    Examples
    --------
    >>> register_algorithm("my-ring", lambda op, p, fabric, nodes: ((), None))
    Traceback (most recent call last):
    ...
    fabric.SpecError: register 'my-ring' in ALGORITHMS first
    """
    if not any(name in algs for algs in ALGORITHMS.values()):
        raise SpecError(f"register {show_value(name)} in ALGORITHMS first")
    _REGISTERED[name] = builder


#: Algorithms that are loads and stores into peers' symmetric buffers.
SYMMETRIC_MEMORY = frozenset({"one-shot", "two-shot"})

# A step with more flows than this is refused (one-shot over 16,384 ranks would be
# 2.7e8 flows): a limit of this implementation's memory, said so in the error.
MAX_FLOWS = 1 << 24


class NotApplicableError(SpecError):
    """An algorithm does not apply to this operation, rank count or fabric."""


NotApplicableError.__module__ = "analysis"


@dataclasses.dataclass(frozen=True, eq=False)
class Step:
    """One step of a schedule: flows that run concurrently.

    Attributes
    ----------
    src, dst : ndarray of int64
        Participants (rank positions ``0..p-1``; switches ``p + i``).
    fraction : ndarray of float64
        Bytes of each flow per byte of the operation's size.
    reduce : float
        Bytes the busiest rank reduces in this step, per byte of size.
    repeat : int
        How many times the step runs back to back.
    label : str
    """

    src: np.ndarray
    dst: np.ndarray
    fraction: np.ndarray
    reduce: float = 0.0
    repeat: int = 1
    label: str = ""

    def __post_init__(self):
        src = np.ascontiguousarray(self.src, dtype=np.int64)
        dst = np.ascontiguousarray(self.dst, dtype=np.int64)
        frac = np.ascontiguousarray(np.broadcast_to(
            np.asarray(self.fraction, dtype=np.float64), src.shape))
        keep = (src != dst) & (frac > 0)
        if not keep.all():
            src, dst, frac = src[keep], dst[keep], frac[keep]
        for a in (src, dst, frac):
            a.flags.writeable = False
        object.__setattr__(self, "src", src)
        object.__setattr__(self, "dst", dst)
        object.__setattr__(self, "fraction", frac)

    @property
    def n_flows(self):
        return len(self.src)


@dataclasses.dataclass(frozen=True, eq=False)
class Schedule:
    """An algorithm for one operation over ``p`` ranks, as steps (see the module docstring).

    Attributes
    ----------
    op, algorithm : str
    p : int
    steps : tuple of Step
    pipeline : int or None
        Fill/drain stages ``D`` of a pipelined schedule (one step per chunk).
    switches : tuple
        Fabric nodes standing for participants ``p, p+1, ...`` (in-switch only).
    in_network : bool
        Reductions happen in switches, not in chips.
    symmetric_memory : bool
        Flows are loads/stores into peers' symmetric buffers (needs a
        load/store transport).
    """

    op: str
    algorithm: str
    p: int
    steps: tuple
    pipeline: int = None
    switches: tuple = ()
    in_network: bool = False
    symmetric_memory: bool = False

    def bytes_sent(self, nbytes=1.0):
        """Most bytes any rank sends over the whole schedule (pipeline: the full size)."""
        sent = np.zeros(self.p + len(self.switches))
        for s in self.steps:
            reps = 1 if self.pipeline is not None else s.repeat
            np.add.at(sent, s.src, s.fraction * reps)
        return round(float(sent[:self.p].max(initial=0.0)) * nbytes, 12)


# -- small helpers -----------------------------------------------------------------------


def _is_pow2(p):
    return p >= 1 and (p & (p - 1)) == 0


def _rounds(p):
    return (p - 1).bit_length()


def _need_pow2(op, algorithm, p):
    if not _is_pow2(p):
        raise NotApplicableError(
            f"{algorithm} {op} needs a power-of-two number of ranks, got p={p}")


def _all_pairs(members):
    """Every ordered pair (a, b), a != b, of a 1-D array of participants."""
    m = np.asarray(members, dtype=np.int64)
    k = len(m)
    a = np.repeat(m, k)
    b = np.tile(m, k)
    keep = a != b
    return a[keep], b[keep]


def _check_flows(count, op, algorithm):
    if count > MAX_FLOWS:
        raise NotApplicableError(
            f"{algorithm} {op} needs {count} flows in one step, above this implementation's "
            f"limit of {MAX_FLOWS}; use a ring, tree or hierarchical algorithm at this scale")


# -- flat algorithms ---------------------------------------------------------------------


def _by_host(fabric, nodes):
    """Positions in ``nodes`` per host domain (``None``: chips in none), hosts in order of
    their first rank, positions in rank order."""
    host_of = fabric.host_of
    hosts = {}
    for i, n in enumerate(nodes):
        hosts.setdefault(host_of.get(n), []).append(i)
    return hosts


def _host_groups(fabric, nodes):
    """The channel rings of the group's ranks in rank order, host by host (hosts in order of
    their first rank, :func:`host_rings`); None for a group inside one host or with a host of
    one rank."""
    if fabric is None or nodes is None:
        return None
    return host_rings(fabric, nodes, list(_by_host(fabric, nodes).values()))


def _net_port(G, n):
    """Whether chip ``n`` has a way into the network of its own: a link that carries messages
    only (a chip cabled into the network), or a NIC with such a link past it."""
    for v, d in G[n].items():
        if d.get("carries") == "messages":
            return True
        if G.nodes[v].get("kind") == "nic" and any(
                e.get("carries") == "messages" for e in G[v].values()):
            return True
    return False


def _lost_port(fabric, nodes, i):
    """Whether rank ``i`` had a network port on the fabric as built and lost it to a failure
    (its NIC, the NIC's link to it, or the NIC's network link)."""
    intact = fabric.intact
    return (intact is not None and _net_port(intact.graph, nodes[i])
            and not _net_port(fabric.graph, nodes[i]))


def host_rings(fabric, nodes, runs):
    """NCCL's channel rings over a group spread over several hosts; None where there is one.

    ``runs`` holds each host's ranks (positions in ``nodes``) in the order a ring visits them,
    hosts in ring order. NCCL's ring graph is searched on every node and allgathered: every
    node runs the least node's channel count (NVIDIA/nccl ``src/init.cc``: ``nChannels = min``
    over the nodes), and channel ``c``'s chain enters a node at a GPU local to the channel's NIC
    and leaves it from its last GPU (``src/graph/search.cc``: 'NET n -> GPU a -> .. -> GPU x ->
    NET n'; ``src/graph/connect.cc``: ``ringRecv`` / ``ringSend``, the chain's first and last).
    So with ``k`` the fewest ranks a host holds, ring ``c < k`` enters every host at its ``c``-th
    rank and leaves from the one before, and the ``k`` rings leave each host from ``k``
    different ranks (and NICs). A rank whose network port a failure took (its NIC, or the
    NIC's link) never enters or leaves: it rides inside every chain, right after the entry
    (NCCL reaches a NIC from such a GPU only through an NVLink peer local to it: PXN,
    ``src/graph/paths.cc``), and ``k`` counts the ranks that kept their port. Hosts of equal
    size, none degraded: the ``g`` rotations of every host's ranks. Hosts of unequal size
    that reach one another without a network (no NIC, no message-only link in a host of the
    fabric as built): None."""
    runs = [list(r) for r in runs]
    if len(runs) < 2 or min(len(r) for r in runs) < 2:
        return None
    built = (fabric.intact or fabric).graph
    if len({len(r) for r in runs}) > 1 and not all(
            any(_net_port(built, nodes[i]) for i in r) for r in runs):
        # hosts of unequal size joined by load/store links alone (a grid's rows): no
        # network ring graph to follow; one ring, as before
        return None
    heads, tails = [], []
    for r in runs:
        lost = [_lost_port(fabric, nodes, i) for i in r]
        heads.append([i for i, x in zip(r, lost) if not x])
        tails.append([i for i, x in zip(r, lost) if x])
    k = min(len(h) for h in heads)
    if k < 2:
        return None
    rings = []
    for c in range(k):
        order = []
        for h, t in zip(heads, tails):
            order += h[c:c + 1] + t + h[c + 1:] + h[:c]
        rings.append(np.array(order, dtype=np.int64))
    return rings


def _ring(op, p, rings=None):
    """Ring steps; on a multi-host group, NCCL's channel rings (:func:`host_rings`).

    NCCL runs several rings at once (channels). On a group spread over ``h``
    hosts of ``g`` ranks each, ring ``c`` visits every host's ranks starting
    from its ``c``-th, so the ``g`` rings leave each host from ``g`` different
    ranks (and NICs); each carries ``1/g`` of the data (over hosts of unequal
    size, ``k`` rings, the fewest ranks a host holds). Inside one host (or for
    one rank per host) every rotation is the same ring: one ring.
    """
    r = np.arange(p)
    if rings is None:
        src, dst, frac = r, (r + 1) % p, np.full(p, 1.0 / p)
    else:
        g = len(rings)
        pairs = [order * p + np.roll(order, -1) for order in rings]
        codes, counts = np.unique(np.concatenate(pairs), return_counts=True)
        src, dst, frac = codes // p, codes % p, counts / (g * p)
    rs = Step(src=src, dst=dst, fraction=frac, reduce=1.0 / p, repeat=p - 1, label="reduce-scatter")
    # the same flows in both phases: share the arrays so they are routed once
    ag = Step(src=rs.src, dst=rs.dst, fraction=rs.fraction, repeat=p - 1, label="all-gather")
    if op == "all-reduce":
        return (rs, ag)
    return (rs,) if op == "reduce-scatter" else (ag,)


def _xor_steps(p, fractions, reduce, label):
    r = np.arange(p)
    return tuple(Step(src=r, dst=r ^ (1 << k), fraction=f, reduce=f * reduce, label=f"{label} {k}")
                 for k, f in fractions)


def _recursive_doubling(op, p):
    _need_pow2(op, "recursive-doubling", p)
    L = _rounds(p)
    if op == "all-reduce":
        return _xor_steps(p, [(k, 1.0) for k in range(L)], 1.0, "exchange")
    return _xor_steps(p, [(k, 2 ** k / p) for k in range(L)], 0.0, "doubling")


def _halving(p):
    # recursive halving: distance p/2 first, exchanging half of what is left
    r = np.arange(p)
    L = _rounds(p)
    return tuple(Step(src=r, dst=r ^ (p >> (k + 1)), fraction=1.0 / 2 ** (k + 1),
                      reduce=1.0 / 2 ** (k + 1),
                      label=f"halving {k}") for k in range(L))


def _doubling_back(p):
    r = np.arange(p)
    L = _rounds(p)
    return tuple(Step(src=r, dst=r ^ (p >> (k + 1)), fraction=1.0 / 2 ** (k + 1),
                      label=f"doubling {k}")
                 for k in reversed(range(L)))


def _rabenseifner(op, p):
    _need_pow2(op, "rabenseifner", p)
    return _halving(p) + _doubling_back(p)


def _recursive_halving(op, p):
    _need_pow2(op, "recursive-halving", p)
    return _halving(p)


def _bruck(op, p):
    r = np.arange(p)
    steps = []
    for k in range(_rounds(p)):
        d = 1 << k
        if op == "all-gather":
            # round k: send the min(2^k, p - 2^k) blocks held so far to rank - 2^k
            steps.append(Step(src=r, dst=(r - d) % p, fraction=min(d, p - d) / p,
                              label=f"round {k}"))
        else:
            # all-to-all: round k sends the blocks whose (rotated) index has bit k set
            blocks = sum(1 for j in range(1, p) if j & d)
            steps.append(Step(src=r, dst=(r + d) % p, fraction=blocks / p, label=f"round {k}"))
    return tuple(steps)


def _pairwise(op, p, traffic=None):
    r = np.arange(p)
    steps = []
    for s in range(1, p):
        dst = (r + s) % p
        if traffic is not None:
            frac = traffic[r, dst]
            steps.append(Step(src=r, dst=dst, fraction=frac, label=f"shift {s}"))
        elif op == "reduce-scatter":
            steps.append(Step(src=r, dst=dst, fraction=1.0 / p, reduce=1.0 / p, label=f"shift {s}"))
        else:
            steps.append(Step(src=r, dst=dst, fraction=1.0 / p, label=f"shift {s}"))
    return tuple(steps)


def _binomial_bcast(p):
    steps = []
    for k in range(_rounds(p)):
        d = 1 << k
        src = np.arange(min(d, p - d))
        steps.append(Step(src=src, dst=src + d, fraction=1.0, label=f"round {k}"))
    return steps


def _binomial_reduce(p):
    return [Step(src=s.dst, dst=s.src, fraction=1.0, reduce=1.0, label=s.label)
            for s in reversed(_binomial_bcast(p))]


def _binomial(op, p):
    if op == "broadcast":
        return tuple(_binomial_bcast(p))
    if op == "reduce":
        return tuple(_binomial_reduce(p))
    return tuple(_binomial_reduce(p) + _binomial_bcast(p))


def _binomial_scatter(p):
    """Scatter from rank 0 by halving ranges: [lo, hi) sends its upper part to its middle."""
    steps = []
    ranges = [(0, p)]
    while any(hi - lo > 1 for lo, hi in ranges):
        src, dst, frac, nxt = [], [], [], []
        for lo, hi in ranges:
            if hi - lo > 1:
                mid = lo + (hi - lo + 1) // 2
                src.append(lo)
                dst.append(mid)
                frac.append((hi - mid) / p)
                nxt += [(lo, mid), (mid, hi)]
            else:
                nxt.append((lo, hi))
        steps.append(Step(src=src, dst=dst, fraction=frac, label=f"scatter {len(steps)}"))
        ranges = nxt
    return steps


def _scatter_allgather(op, p, kind, hosts=None):
    if kind == "recursive-doubling":
        _need_pow2(op, "scatter-recursive-doubling", p)
        return tuple(_binomial_scatter(p)) + _recursive_doubling("all-gather", p)
    return tuple(_binomial_scatter(p)) + _ring("all-gather", p, hosts)


def _one_shot(op, p, traffic=None):
    r = np.arange(p)
    if op == "broadcast":
        return (Step(src=np.zeros(p - 1, np.int64), dst=r[1:], fraction=1.0, label="store to all"),)
    if op == "reduce":
        return (Step(src=r[1:], dst=np.zeros(p - 1, np.int64), fraction=1.0, reduce=p - 1.0,
                     label="store to root"),)
    _check_flows(p * (p - 1), op, "one-shot")
    a, b = _all_pairs(r)
    if traffic is not None:
        return (Step(src=a, dst=b, fraction=traffic[a, b], label="store to all"),)
    if op == "all-reduce":
        # every rank stores its whole buffer into every peer, then reduces p buffers
        return (Step(src=a, dst=b, fraction=1.0, reduce=p - 1.0, label="store to all"),)
    if op == "reduce-scatter":
        return (Step(src=a, dst=b, fraction=1.0 / p, reduce=(p - 1) / p, label="store blocks"),)
    return (Step(src=a, dst=b, fraction=1.0 / p, label="store to all"),)  # all-gather, all-to-all


def _point_to_point(p):
    """One message of ``n`` bytes from rank 0 to rank 1; over more ranks, each rank to the next.

    Two ranks: the single message of a send/recv pair. More ranks: every rank
    sends ``n`` to ``(r + 1) % p`` at once, as nccl-tests' ``sendrecv_perf``
    does (each rank sends to one peer and receives from another).
    """
    r = np.arange(p)
    if p == 2:
        return (Step(src=[0], dst=[1], fraction=1.0, label="message"),)
    return (Step(src=r, dst=(r + 1) % p, fraction=1.0, label="message to the next rank"),)


def _two_shot(op, p):
    _check_flows(p * (p - 1), op, "two-shot")
    a, b = _all_pairs(np.arange(p))
    rs = Step(src=a, dst=b, fraction=1.0 / p, reduce=(p - 1) / p,
              label="reduce-scatter (store blocks)")
    ag = Step(src=rs.src, dst=rs.dst, fraction=rs.fraction, label="all-gather (store block to all)")
    return (rs, ag)


# -- double binary tree ------------------------------------------------------------------


def _btree(p):
    """Parent of each rank in NCCL's binary tree over 0..p-1 (root 0: -1), and the height.

    NCCL ``ncclGetBtree`` (src/graph/trees.cc): with ``bit`` the lowest set bit
    of rank ``r``, its parent is ``(r ^ bit) | (bit << 1)``, or ``r ^ bit`` if
    that is not a rank. Odd ranks are leaves.
    """
    parent = np.full(p, -1, dtype=np.int64)
    for r in range(1, p):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < p else r ^ bit
    depth = np.zeros(p, dtype=np.int64)
    for r in range(1, p):
        d, x = 0, r
        while x != 0:
            x = parent[x]
            d += 1
        depth[r] = d
    return parent, int(depth.max(initial=0))


def _double_binary_tree(op, p):
    """Two binary trees, each carrying half the data (NCCL ``ncclGetDtree``).

    The second tree is the first mirrored (rank ``r`` -> ``p-1-r``) when ``p``
    is even and shifted by one when it is odd, so that a rank is an interior
    node of at most one tree (Sanders, Speck, Träff 2009; NCCL 2.4,
    src/graph/trees.cc). Pipelined: per stage every tree edge carries one chunk
    up (reduce) and one down (broadcast); the pipeline fills in one tree height
    per direction.
    """
    if p < 2:
        raise NotApplicableError("double-binary-tree needs at least 2 ranks")
    parent, height = _btree(p)
    child = np.flatnonzero(parent >= 0)
    if p % 2 == 0:
        second = (p - 1 - child, p - 1 - parent[child])
    else:
        second = ((child + 1) % p, (parent[child] + 1) % p)
    if op in ("broadcast", "reduce"):
        # a rooted operation: only rank 0 holds the data (broadcast) or the result (reduce),
        # so the second tree must be rooted there too. Relabel it by swapping rank 0 with the
        # second tree's root (its image of rank 0); on 2 ranks both trees are then one edge
        # 0 - 1, each carrying half the data.
        root = (p - 1) if p % 2 == 0 else 1
        swap = np.arange(p)
        swap[[0, root]] = [root, 0]
        second = (swap[second[0]], swap[second[1]])
    trees = [(child, parent[child]), second]
    src, dst, frac = [], [], []
    children = np.zeros(p)
    for c, par in trees:
        if op in ("all-reduce", "reduce"):
            src.append(c)
            dst.append(par)
            frac.append(np.full(len(c), 0.5))
            np.add.at(children, par, 0.5)
        if op in ("all-reduce", "broadcast"):
            src.append(par)
            dst.append(c)
            frac.append(np.full(len(c), 0.5))
    reduce = float(children.max()) if op != "broadcast" else 0.0
    stages = 2 * height if op == "all-reduce" else height
    step = Step(src=np.concatenate(src), dst=np.concatenate(dst), fraction=np.concatenate(frac),
                reduce=reduce,
                label="pipeline stage (both trees)")
    return (step,), stages


# -- fabric-aware algorithms -------------------------------------------------------------


def in_switch_planes(fabric, nodes):
    """Switches that can reduce for a group of chips, with each one's share of the data.

    A switch can reduce in the network (NVLink SHARP style) when its node
    attribute ``reduction`` is true (set by the builders for NVSwitch-class
    switches; see :mod:`topologies`). The group can use it when every chip of
    the group has a link to it. Data is split over the usable switches in
    proportion to the smallest link bandwidth any chip of the group has to
    each, so every chip sends each switch the same slice.

    Parameters
    ----------
    fabric : Fabric
    nodes : sequence
        The group's chips: names or ranks, each once, read as :func:`analysis.cost` reads a
        collective's ranks (an unknown or failed node, a switch, a repeat is a NodeError).

    Returns
    -------
    tuple of (node, float)
        Each usable switch and its share (shares sum to 1), in graph order.

    Raises
    ------
    NotApplicableError
        Naming why: no reducing switch, or none that every chip reaches directly.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("dgx-h100")   # 5, 4, 4, 5 NVLinks to four NVSwitches
    >>> [(s, round(share, 4)) for s, share in in_switch_planes(f, f.endpoints)]
    [('sw0', 0.2778), ('sw1', 0.2222), ('sw2', 0.2222), ('sw3', 0.2778)]
    """
    fabric = fabric_arg(fabric)
    nodes = sequence_of(nodes, "nodes", "chips (node names)")
    # (an unknown name was no neighbour of any switch: 'none of the 4 reducing switches
    # reaches all 2 ranks'; ranks [0, 1] the same, though ints are ranks)
    nodes = resolve_ranks(fabric, nodes, "nodes")[0]
    G = fabric.graph
    reducing = [n for n, d in G.nodes(data=True) if d.get("kind") == "switch"
                and d.get("reduction")]
    if not reducing:
        raise NotApplicableError(
            f"in-switch reduction needs switches with the node attribute reduction=True; "
            f"{fabric.name} has none")
    shares = []
    for s in reducing:
        nbrs = G[s]
        if all(c in nbrs for c in nodes):
            shares.append((s, min(nbrs[c]["bandwidth"] for c in nodes)))
    if not shares:
        raise NotApplicableError(
            f"in-switch reduction needs a reducing switch linked to every rank of the group; "
            f"on {fabric.name} none of the {len(reducing)} reducing switches reaches all "
            f"{len(nodes)} ranks")
    total = sum(b for _, b in shares)
    return tuple((s, b / total) for s, b in shares)


def _in_switch(op, p, fabric, nodes):
    """NVLink SHARP data flow, pipelined in chunks (one fill stage).

    All-reduce: each rank reduces its 1/p slice with ``multimem.ld_reduce`` (the
    switch pulls the slice from every rank and returns the sum) and stores it
    with ``multimem.st`` (the switch multicasts it to every rank): per rank and
    direction ``n (1 + 1/p)`` (NVIDIA/nccl issue 2072; nccl-tests issue 212).
    Reduce-scatter is the first half (``n`` out, ``n/p`` in), all-gather the
    second (``n/p`` out, ``n`` in; NVIDIA/nccl issue 1506); broadcast is one
    multicast store from the root, reduce one ``ld_reduce`` by the root.
    """
    planes = in_switch_planes(fabric, nodes)
    r = np.arange(p)
    src, dst, frac = [], [], []
    up = {"all-reduce": 1 + 1 / p, "reduce-scatter": 1.0, "all-gather": 1 / p}
    down = {"all-reduce": 1 + 1 / p, "reduce-scatter": 1 / p, "all-gather": 1.0}
    for i, (_, share) in enumerate(planes):
        s = p + i
        if op in up:
            src += [r, np.full(p, s)]
            dst += [np.full(p, s), r]
            frac += [np.full(p, share * up[op]), np.full(p, share * down[op])]
        elif op == "broadcast":
            src += [np.array([0]), np.full(p - 1, s)]
            dst += [np.array([s]), r[1:]]
            frac += [np.array([share]), np.full(p - 1, share)]
        else:  # reduce
            src += [r, np.array([s])]
            dst += [np.full(p, s), np.array([0])]
            frac += [np.full(p, share), np.array([share])]
    step = Step(src=np.concatenate(src), dst=np.concatenate(dst), fraction=np.concatenate(frac),
                label="pipeline stage (switch reduce and multicast)")
    return (step,), tuple(s for s, _ in planes)


def group_grid(fabric, nodes, algorithm="this algorithm"):
    """The group's grid: ``(shape, connect, grid)``, for multi-dimensional schedules.

    On a :class:`fabric.Grid` (the whole grid as the group): its shape and per-dimension
    connection; on a cluster: ``(ranks per host, hosts)`` with ``connect=None`` (inside
    each host domain, then across hosts at the same local index). ``grid[slot]`` is the
    rank position of the chip at grid slot ``slot`` (dimension 0 fastest). Raises
    NotApplicableError, naming ``algorithm``, for any other group.
    """
    p = len(nodes)
    if isinstance(fabric.structure, Grid):
        shape, connect = fabric.structure.shape, fabric.structure.connect
        coords = [fabric.graph.nodes[n].get("coord") for n in nodes]
        if p != math.prod(shape) or any(c is None for c in coords):
            raise NotApplicableError(
                f"{algorithm} needs the whole {'x'.join(map(str, shape))} grid of "
                f"{fabric.name} as its group; got {p} ranks")
        strides = np.cumprod((1,) + shape[:-1])
        slot = np.array([int(np.dot(c, strides)) for c in coords])
        grid = np.empty(p, dtype=np.int64)
        grid[slot] = np.arange(p)  # grid[slot] = position of the chip at that slot
        return shape, connect, grid
    hosts = _by_host(fabric, nodes)
    sizes = {len(v) for v in hosts.values()}
    if len(hosts) < 2 or len(sizes) != 1:
        raise NotApplicableError(
            f"{algorithm} needs a hypermesh/torus grid, or ranks spread evenly over at least "
            f"two host domains; on {fabric.name} the group spans {len(hosts)} host(s) with "
            f"sizes {sorted(sizes)}")
    g = sizes.pop()
    grid = np.array([i for members in hosts.values() for i in members], dtype=np.int64)
    return (g, len(hosts)), None, grid


def _grid(fabric, nodes):
    """Dimensions for the hierarchical algorithm: (sizes, per-dimension kind, position grid)."""
    shape, connect, grid = group_grid(fabric, nodes, "hierarchical")
    if connect is None:  # clusters: inside each host domain, then across hosts
        return shape, ("direct", "ring"), grid, "intra-then-inter"
    kinds = tuple({"full": "direct", "switch": "direct", "ring": "bidirectional ring"}
                  .get(c, "ring") for c in connect)
    return shape, kinds, grid, "per-dimension"


def _hierarchical(op, p, fabric, nodes):
    """Per-dimension phases (ASTRA-sim's scheme, docs/sources.md s.2).

    Reduce-scatter along dimension 0, then 1, ...; all-gather back in reverse
    order; all-reduce is both. Each phase works on the data the previous one
    left (n, n/s0, n/(s0 s1), ...); all lines of a dimension run at once.
    Within a line the phase is direct (every member stores to every other, one
    step) where the line is all-to-all or switched; a bidirectional ring (half
    the data each way round, as TPU tori run them) where the line is a ring; a
    ring along a line (mesh); across hosts of a cluster, a ring; inside a host,
    direct.
    All-to-all forwards along each dimension in turn: every rank sends each
    line peer the blocks bound for that peer's coordinate (n / s per peer).
    """
    shape, kinds, grid, _what = _grid(fabric, nodes)
    strides = np.cumprod((1,) + tuple(shape[:-1]))
    slots = np.arange(p)
    dims = [d for d, s in enumerate(shape) if s > 1]

    def lines(d):
        # positions of each line along dimension d: array (lines, s_d)
        s = shape[d]
        base = slots[(slots // strides[d]) % s == 0]
        return grid[base[:, None] + np.arange(s)[None, :] * strides[d]]

    def phase(d, frac, reduce, label):
        L = lines(d)
        s = shape[d]
        if kinds[d] == "direct" or op == "all-to-all":
            a = np.repeat(L, s, axis=1).ravel()
            b = np.tile(L, (1, s)).ravel()
            red = reduce * (s - 1)
            return [Step(src=a, dst=b, fraction=frac, reduce=red,
                         label=f"{label} dim {d} (direct)")]
        nxt = np.roll(L, -1, axis=1)
        if kinds[d] == "bidirectional ring" and s > 2:
            # a torus dimension: half the data each way round, both link directions busy
            prv = np.roll(L, 1, axis=1)
            return [Step(src=np.concatenate([L.ravel(), L.ravel()]),
                         dst=np.concatenate([nxt.ravel(), prv.ravel()]), fraction=frac / 2,
                         reduce=reduce,
                         repeat=s - 1, label=f"{label} dim {d} (bidirectional ring)")]
        return [Step(src=L.ravel(), dst=nxt.ravel(), fraction=frac, reduce=reduce, repeat=s - 1,
                     label=f"{label} dim {d} (ring)")]

    steps = []
    if op == "all-to-all":
        for d in dims:
            steps += phase(d, 1.0 / shape[d], 0.0, "forward")
        return tuple(steps)
    phi = 1.0
    if op in ("all-reduce", "reduce-scatter"):
        for d in dims:
            steps += phase(d, phi / shape[d], phi / shape[d], "reduce-scatter")
            phi /= shape[d]
    if op == "all-gather":
        phi = 1.0 / p
    if op in ("all-reduce", "all-gather"):
        for d in reversed(dims):
            steps += phase(d, phi, 0.0, "all-gather")
            phi *= shape[d]
    return tuple(steps)


# -- the public builder ------------------------------------------------------------------


def _traffic(traffic, p):
    if traffic is None:
        raise SpecError("all-to-allv needs a traffic matrix (bytes, rank x rank)")
    M = traffic_values(traffic, p, f"traffic must be an all-to-allv traffic matrix ({p} x {p} "
                                   "bytes)", "traffic")
    off = M.copy()
    np.fill_diagonal(off, 0.0)
    if off.sum() <= 0:
        raise SpecError("the traffic matrix moves no bytes between distinct ranks")
    return M


def schedule(op, algorithm, p, *, fabric=None, nodes=None, traffic=None):
    """Build the schedule of ``algorithm`` for ``op`` over ``p`` ranks.

    Parameters
    ----------
    op : str
        One of :data:`analysis.OPERATIONS`.
    algorithm : str
        One of :data:`ALGORITHMS` for ``op`` (not ``"auto"``: that is
        :func:`analysis.cost`'s choice).
    p : int
        Ranks, >= 1.
    fabric : Fabric, optional
        Needed by ``"hierarchical"`` and ``"in-switch"``; with it, ``"ring"`` over
        several host domains runs one ring per rank of a host (NCCL's channels).
    nodes : sequence, optional
        The group's chips in rank order, names or ranks, each once (default: the fabric's
        endpoints), read as :func:`analysis.cost` reads a collective's ranks.
    traffic : array_like, optional
        For all-to-allv: ``traffic[i, j]`` bytes from rank ``i`` to rank ``j``.

    Raises
    ------
    NotApplicableError
        The algorithm does not apply, with the reason.
    SpecError
        Unknown operation or algorithm.

    Examples
    --------
    >>> [s.label for s in schedule("all-reduce", "rabenseifner", 4).steps]
    ['halving 0', 'halving 1', 'doubling 1', 'doubling 0']
    >>> schedule("all-gather", "recursive-doubling", 12)
    Traceback (most recent call last):
    ...
    analysis.NotApplicableError: recursive-doubling all-gather needs a power-of-two number of ranks, got p=12
    """
    op = normalize_op(op)
    algorithm = normalize_algorithm(algorithm)
    p = check_length(check_count(p, "p", 1), f"p={p} ranks")   # each step: an array of p
    if fabric is not None:
        fabric = fabric_arg(fabric)
    known = ALGORITHMS[op]
    if algorithm not in known:
        every = sorted({a for algs in ALGORITHMS.values() for a in algs})
        if algorithm in every:
            raise NotApplicableError(f"{algorithm} is not an algorithm for {op}; for {op} use "
                                     + ", ".join(known))
        raise SpecError(f"{op}: " + unknown_fault(algorithm, "algorithm", ("auto", *known)))
    M = _traffic(traffic, p) if op == "all-to-allv" else None
    if p == 1:
        return Schedule(op=op, algorithm=algorithm, p=1, steps=())
    pipeline, switches = None, ()
    if algorithm in ("hierarchical", "in-switch") and fabric is None:
        raise NotApplicableError(f"{algorithm} needs a fabric")
    if fabric is not None:
        # read as cost reads ranks (an unknown name was a host of its own, ranks [0, 1] no
        # host's chips: a ring over one host where the names gave one ring per host)
        nodes = (tuple(fabric.endpoints) if nodes is None else
                 resolve_ranks(fabric, nodes, "nodes")[0])
        if len(nodes) != p:
            raise SpecError(f"nodes must list p={p} chips, got {len(nodes)}")
    if algorithm == "ring":
        steps = _ring(op, p, _host_groups(fabric, nodes))
    elif algorithm == "recursive-doubling":
        steps = _recursive_doubling(op, p)
    elif algorithm == "rabenseifner":
        steps = _rabenseifner(op, p)
    elif algorithm == "recursive-halving":
        steps = _recursive_halving(op, p)
    elif algorithm == "bruck":
        steps = _bruck(op, p)
    elif algorithm == "pairwise":
        steps = _pairwise(op, p, M)
    elif algorithm == "binomial":
        steps = _binomial(op, p)
    elif algorithm == "scatter-recursive-doubling":
        steps = _scatter_allgather(op, p, "recursive-doubling")
    elif algorithm == "scatter-ring":
        steps = _scatter_allgather(op, p, "ring", _host_groups(fabric, nodes))
    elif algorithm in ("one-shot", "scattered"):
        steps = _one_shot(op, p, M)
    elif algorithm == "two-shot":
        steps = _two_shot(op, p)
    elif algorithm == "point-to-point":
        steps = _point_to_point(p)
    elif algorithm == "double-binary-tree":
        steps, pipeline = _double_binary_tree(op, p)
    elif algorithm == "hierarchical":
        steps = _hierarchical(op, p, fabric, nodes)
    elif algorithm in _REGISTERED:
        steps, pipeline = _REGISTERED[algorithm](op, p, fabric, nodes)
    else:  # in-switch
        steps, switches = _in_switch(op, p, fabric, nodes)
        pipeline = 1
    return Schedule(op=op, algorithm=algorithm, p=p, steps=tuple(steps), pipeline=pipeline,
                    switches=switches,
                    in_network=algorithm == "in-switch",
                    symmetric_memory=algorithm in SYMMETRIC_MEMORY)


def resolve_ranks(fabric, ranks, what="ranks"):
    """``(chip names, node indices)`` of a collective's ``ranks`` as :func:`cost` reads them:
    ``None`` is every endpoint; a string or a number is no group (TypeError); a rank named
    twice, a node that is not a chip, or an empty group is refused by name; so are ranks the
    failures split into groups with no path between them (an island or a chip cut off
    alone: :class:`~fabric.RoutingError` naming it, :func:`fabric._failures.require_joined`),
    under every runtime and even when no byte would cross: no communicator joins them.
    ``what`` names the argument (``in_switch_planes``' ``nodes``), in the node's message too
    (``'torus:4x4: ranks: no node called 'x''``)."""
    fabric = fabric_arg(fabric)     # (a spec str was an AttributeError: 'rank_of')
    if ranks is None:
        require_joined(fabric, fabric.endpoints)
        return tuple(fabric.endpoints), fabric.endpoint_indices
    ranks = sequence_of(ranks, what, "ranks or chip names")
    rank_of = fabric.rank_of
    if all(type(x) is str and x in rank_of for x in ranks) and len(set(ranks)) == len(ranks):
        # live chips by name, each once (what cost hands schedule and in_switch_planes): the
        # loop below would answer them as they are (~7 us a chip in Fabric.node)
        nodes = list(ranks)
    else:
        nodes, seen = [], {}
        for x in ranks:
            n = fabric.node(x, what)
            if n not in rank_of:
                raise NodeError(f"{fabric.name}: {x!r} is not a chip endpoint, so it cannot be "
                                f"a rank of a collective")
            if n in seen:
                raise NodeError(f"{what} lists {n!r} twice (as {seen[n]!r} and {x!r}); each "
                                f"rank takes part once")
            seen[n] = x
            nodes.append(n)
    if not nodes:
        raise SpecError(f"{what} must name at least one rank")
    require_joined(fabric, nodes)
    idx = fabric.node_index
    return tuple(nodes), np.array([idx[n] for n in nodes], dtype=np.int64)
