"""Pieces every builder shares: parameter checks, link attributes, host grouping, the Fabric."""

import math
import numbers

import networkx as nx

from fabric import Fabric, SpecError, chip_spec, link_tech

# A size beyond which a build is refused as not sane for an analytical model on one machine.
MAX_ENDPOINTS = 2**20
MAX_LINKS = 2**24


def positive_int(value, name, minimum=1):
    """Return ``value`` as an int >= ``minimum`` or raise SpecError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, str) and value.strip().lstrip("+").isdigit():
            value = int(value)
        else:
            raise SpecError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise SpecError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def per_dim(value, ndim, name, check):
    """Broadcast one value to every dimension, or check a sequence of ``ndim`` values."""
    if isinstance(value, (str, numbers.Integral)):
        values = [value] * ndim
    else:
        values = list(value)
        if len(values) != ndim:
            raise SpecError(f"{name} needs 1 or {ndim} values (one per dimension), "
                            f"got {len(values)}: {values!r}")
    return tuple(check(v) for v in values)


def check_size(endpoints, links, what):
    if endpoints > MAX_ENDPOINTS:
        raise SpecError(f"{what} has {endpoints:,} endpoints; the limit is {MAX_ENDPOINTS:,}")
    if links > MAX_LINKS:
        raise SpecError(f"{what} has {links:,} links; the limit is {MAX_LINKS:,}")


def link_attrs(tech, lanes=1):
    """Edge attributes for a bundle of ``lanes`` links of technology ``tech``."""
    return {"bandwidth": tech.bandwidth * lanes, "latency": tech.latency, "lanes": lanes,
            "tech": tech.name, "carries": tech.carries}


def resolve_tech(tech, name="tech"):
    try:
        return link_tech(tech)
    except SpecError as e:
        raise SpecError(f"{name}: {e}") from None


def hosts_of(n, chips_per_host, what):
    """Check that ``chips_per_host`` divides ``n``; return it."""
    chips_per_host = positive_int(chips_per_host, "chips_per_host")
    if n % chips_per_host:
        raise SpecError(f"chips_per_host={chips_per_host} does not divide the {n} chips of {what}")
    return chips_per_host


def add_chips(G, n, chips_per_host, coords=None):
    """Add chips ``chip0..chip{n-1}`` with their host domain (and coordinates)."""
    for r in range(n):
        attrs = {"kind": "chip", "host": f"host{r // chips_per_host}"}
        if coords is not None:
            attrs["coord"] = coords[r]
        G.add_node(f"chip{r}", **attrs)
    return [f"chip{r}" for r in range(n)]


def make_fabric(G, endpoints, *, name, family, params, chip, techs, structure, extra=()):
    """Freeze ``G`` and wrap it; builders make valid graphs by construction (tested)."""
    nx.freeze(G)
    domains = {}
    for n in endpoints:
        domains.setdefault(G.nodes[n]["host"], []).append(n)
    assumptions = []
    for t in techs:
        for p in t.parameters():
            if p not in assumptions:
                assumptions.append(p)
    if chip is not None:
        chip = chip_spec(chip)
        assumptions.extend(chip.parameters())
    assumptions.extend(extra)
    return Fabric(G, tuple(endpoints), name=name, family=family, params=params,
                  domains=domains, chip=chip, assumptions=tuple(assumptions),
                  structure=structure)


def prod(values):
    return math.prod(values)
