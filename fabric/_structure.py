"""The typed structure of a fabric: what its builder knows about its shape.

A builder sets :attr:`fabric.Fabric.structure` to one of the classes below; a
user's own graph has ``None``. Routing, forwarding tables, metrics, throughput
and collective schedules dispatch on the type (``isinstance`` / ``match``),
never on a builder's family name or its parameter dict:

:class:`Grid`
    A direct network of chips on a grid, one graph per dimension (hyper-mesh,
    HyperX, torus, mesh): ``connect[d]`` says how the chips of a line along
    dimension ``d`` are joined. Routed in dimension order.
:class:`Clos`
    A multi-tier tree of switches (fat-tree, leaf-spine, rail-optimized
    cluster), whose endpoints fall into equal groups (pods, leaves, servers).
    Routed up/down.
:class:`Switched`
    One tier of switch planes that every chip links to (NVL72, DGX). Routed
    up/down, bytes striped over the planes in proportion to the links.
:class:`Dragonfly`
    Groups of routers joined all-to-all inside and by one global link between
    every two groups. Routed minimally.

A structure describes the *intact* design. What has failed is a separate value,
:attr:`fabric.Fabric.failures`: a closed form or symmetry argument that holds
for the structure holds for a degraded fabric only if it says so.

Examples
--------
>>> g = Grid((4, 4), "ring")
>>> g.connect, g.links, g.n_chips, g.all_connect("ring", "full")
(('ring', 'ring'), (1, 1), 16, True)
>>> Grid((4,), "star")
Traceback (most recent call last):
...
fabric.SpecError: connect must be one of full, ring, line, switch, got 'star'
"""

import dataclasses
import math

from ._errors import SpecError
from ._units import check_choice, check_count, is_int, items_of, kind_error

__all__ = ["CONNECT", "Clos", "Dragonfly", "Grid", "Switched"]

#: How the chips of one line of a :class:`Grid` are joined: all pairs (HyperX), a
#: ring, a line (no wrap), or a switch per line.
CONNECT = ("full", "ring", "line", "switch")


def check_connect(value, label="connect"):
    """``value`` when it is one of :data:`CONNECT` (a str first: TypeError; then the set:
    SpecError naming ``label``)."""
    return check_choice(value, label, CONNECT)


def _ints(value, name, minimum=1):
    if is_int(value):
        return (check_count(value, name, minimum),)
    out = items_of(value)
    if out is None:             # not a sequence (a string is not read digit by digit)
        raise kind_error(value, name, "an integer or a sequence of integers")
    # each value named by its position: shape[1]=0 (review S31-R1)
    return tuple(check_count(v, f"{name}[{i}]", minimum) for i, v in enumerate(out))


def _int(value, name, minimum=1):
    return check_count(value, name, minimum)


@dataclasses.dataclass(frozen=True)
class Grid:
    """A direct network of chips on a grid: the product of one graph per dimension.

    Parameters
    ----------
    shape : int or sequence of int
        Chips per dimension. The chip at coordinate ``c`` has rank
        ``c[0] + s0 * (c[1] + s1 * c[2] ...)`` (dimension 0 fastest).
    connect : str or sequence of str
        Per dimension, one of :data:`CONNECT`; one value applies to all.
    links : int or sequence of int, default 1
        Parallel links per adjacency, per dimension.
    """

    shape: tuple
    connect: tuple = "full"
    links: tuple = 1

    def __post_init__(self):
        shape = _ints(self.shape, "shape")
        if not shape:
            raise SpecError("a grid needs at least one dimension")
        connect = ((self.connect,) * len(shape) if isinstance(self.connect, str)
                   else items_of(self.connect))
        if connect is None:         # 5 was Python's "'int' object is not iterable"
            raise kind_error(self.connect, "connect", "a connection's name or one per dimension")
        connect = tuple(connect)
        links = _ints(self.links, "links")
        if len(links) == 1:
            links = links * len(shape)
        for name, values in (("connect", connect), ("links", links)):
            if len(values) != len(shape):
                raise SpecError(f"{name} needs 1 or {len(shape)} values (one per dimension), "
                                f"got {len(values)}")
        for c in connect:
            check_connect(c)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "connect", connect)
        object.__setattr__(self, "links", links)

    @property
    def ndim(self):
        """The number of dimensions."""
        return len(self.shape)

    @property
    def n_chips(self):
        """Chips on the grid (the product of the shape)."""
        return math.prod(self.shape)

    def all_connect(self, *kinds):
        """Whether every dimension of more than one chip is joined by one of ``kinds``.

        >>> Grid((4, 1), ("ring", "line")).all_connect("ring")
        True
        """
        return all(c in kinds for s, c in zip(self.shape, self.connect) if s > 1)

    @property
    def has_switches(self):
        """Whether some line is joined by a switch (so not every forwarding node is a chip)."""
        return any(c == "switch" and s > 1 for s, c in zip(self.shape, self.connect))


@dataclasses.dataclass(frozen=True)
class Clos:
    """A multi-tier tree of switches whose endpoints fall into equal groups.

    Parameters
    ----------
    tiers : int
        Switch tiers (a three-tier fat-tree 3, a leaf-spine 2).
    groups : int
        Groups of endpoints below the first shared tier (pods, leaves, servers).
    group_size : int
        Endpoints per group; ranks ``g * group_size ...`` form group ``g``.
    group : str, default "groups"
        What the groups are called, plural ("pods", "leaves", "servers"): used in
        messages.
    full_bisection : bool, default False
        True where the builder proves that halving the groups is a minimum
        balanced cut (the k-ary fat-tree, Al-Fares et al. 2008).
    symmetric : bool, default True
        True where permuting the groups, and the switches within a tier, maps
        every link between two levels onto every other (the builders' Clos
        networks): a uniform traffic then needs one commodity.
    """

    tiers: int
    groups: int
    group_size: int
    group: str = "groups"
    full_bisection: bool = False
    symmetric: bool = True

    def __post_init__(self):
        for name in ("tiers", "groups", "group_size"):
            object.__setattr__(self, name, _int(getattr(self, name), name))


@dataclasses.dataclass(frozen=True)
class Switched:
    """One tier of switch planes that every chip links to (NVL72, DGX H100).

    Parameters
    ----------
    planes : int
        Switch planes.
    links : int or sequence of int, default 1
        Links from every chip to each plane (one value, or one per plane).
    reduction : bool, default False
        Whether the switches reduce in the network (NVLink SHARP).
    """

    planes: int
    links: tuple = 1
    reduction: bool = False

    def __post_init__(self):
        planes = _int(self.planes, "planes")
        links = _ints(self.links, "links")
        if len(links) == 1:
            links = links * planes
        if len(links) != planes:
            raise SpecError(f"links needs 1 or {planes} values (one per plane), got {len(links)}")
        object.__setattr__(self, "planes", planes)
        object.__setattr__(self, "links", links)
        object.__setattr__(self, "reduction", bool(self.reduction))


@dataclasses.dataclass(frozen=True)
class Dragonfly:
    """A dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): ``a`` routers per group, ``p``
    chips and ``h`` global links per router, ``groups`` groups."""

    a: int
    p: int
    h: int
    groups: int

    def __post_init__(self):
        for name in ("a", "p", "h", "groups"):
            object.__setattr__(self, name, _int(getattr(self, name), name))
