"""Fair comparisons: equal network cost, equal network power, each system's best decode layout.

Comparing a fabric built for one budget with a fabric built for another says more
about the budgets than about the fabrics. Topology papers therefore compare at equal
cost (Kim et al., ISCA 2008; Slim Fly, SC14; HammingMesh, SC22) or equal power. Here a
system is brought to a target network cost (or power) per chip by scaling the
bandwidth of every one of its links by one factor ``s`` (more lanes per link, or faster
lanes: the bill of materials prices both per Gb/s), found by solving
``cost(s) = target``; cost is affine in ``s`` under every cost book (prices per Gb/s
plus fixed per-cable and per-NIC parts), and the solution is checked by recosting
the scaled fabric.

Throughputs that come from routing (bisection, all-to-all per chip) scale exactly by
``s``; latency-bound times do not, so collective times are evaluated on the scaled
fabric.

Examples
--------
>>> import topologies
>>> f = topologies.build("torus:4x4x4")
>>> g = scale_links(f, bandwidth=2.0)
>>> g.graph.edges["chip0", "chip1"]["bandwidth"] / f.graph.edges["chip0", "chip1"]["bandwidth"]
2.0
>>> s, _ = equalize(f, 2 * bill_of_materials(f).cost_usd_per_chip)
>>> round(s, 6)
2.0
"""

import math

from fabric import RoutingError, SpecError
from fabric._fabric_arg import fabric_arg
from fabric._schema import bandwidth_fault, latency_fault
from fabric._units import check_choice, check_count, check_number, show_value, text_of

from ._bom import bill_of_materials

__all__ = ["best_decode_layout", "equalize", "scale_links"]

_BASES = ("cost", "power")


def scale_links(f, bandwidth=1.0, latency=1.0, *, tech=None):
    """``f`` with every link's bandwidth and latency multiplied (``tech``: every link of that
    technology's): a what-if copy.

    The copy is ``f`` in every other respect: endpoints and their ranks, host domains,
    chip, family, parameters, typed structure (so the same routing policy and
    structure-aware algorithms), address plan and failures. A degraded copy
    (:func:`fabric.without`) stays degraded, and the fabric as built it was made from
    (:attr:`fabric.Fabric.intact`, what :func:`analysis.bill_of_materials` prices) is
    scaled by the same factors. Its name says what was scaled.

    Parameters
    ----------
    f : fabric.Fabric
    bandwidth, latency : float
        Factors, finite and > 0, on every link's bytes/s and seconds.
    tech : str, optional
        Scale only the links of this technology (their ``tech`` attribute, e.g.
        ``"nvlink5"``); a fabric with no such link is refused (a misspelt name would
        otherwise scale nothing). The report's sensitivity tornado scales one at a time.

    Returns
    -------
    fabric.Fabric

    Examples
    --------
    >>> import topologies
    >>> g = scale_links(topologies.build("nvl72"), bandwidth=2.0)
    >>> g.name, g.graph.edges["chip0", "sw0"]["bandwidth"]      # bytes/s per direction
    ('nvl72 (bandwidth x2)', 100000000000.0)
    """
    f = fabric_arg(f, "f")
    import networkx as nx

    bandwidth, latency = (check_number(name, value, 0, strict=True, tail=" (a factor)")
                          for name, value in (("bandwidth", bandwidth), ("latency", latency)))
    if tech is not None:
        text_of(tech, "tech")
        if not any(d.get("tech") == tech for *_, d in f.graph.edges(data=True)):
            have = sorted({d.get("tech") or "" for *_, d in f.graph.edges(data=True)} - {""})
            raise SpecError(f"{f.name} has no link of technology {show_value(tech)}; its "
                            f"links are {', '.join(have) or 'of no named technology'}")
    if bandwidth == 1.0 and latency == 1.0:
        return f
    G = nx.Graph(f.graph)
    for u, v, d in G.edges(data=True):
        if tech is not None and d.get("tech") != tech:
            continue
        d["bandwidth"] *= bandwidth
        d["latency"] *= latency
        for key, factor, fault in (("bandwidth", bandwidth, bandwidth_fault),
                                   ("latency", latency, latency_fault)):
            if fault(d[key]):
                raise SpecError(f"{key} x{factor:.4g} makes link {u}-{v}'s {key} "
                                 f"{d[key]!r}; {fault(d[key])}")
    nx.freeze(G)
    on = "" if tech is None else f"{tech} "
    parts = [f"{on}bandwidth x{bandwidth:.4g}"] * (bandwidth != 1.0) + \
        [f"{on}latency x{latency:.4g}"] * (latency != 1.0)
    intact = None if f.intact is None else scale_links(f.intact, bandwidth, latency, tech=tech)
    return f.replace(graph=G, name=f"{f.name} ({', '.join(parts)})", intact=intact)


def _per_chip(f, basis, book):
    b = bill_of_materials(f, book)
    return b.cost_usd_per_chip if basis == "cost" else b.power_w_per_chip


def equalize(f, target, basis="cost", book="street-2026"):
    """Scale ``f``'s link bandwidths so its network cost (or power) per chip is ``target``.

    Parameters
    ----------
    f : fabric.Fabric
    target : float
        USD per chip (``basis="cost"``) or W per chip (``basis="power"``).
    basis : {"cost", "power"}
    book : str or fabric.HardwareCosts

    Returns
    -------
    (float, fabric.Fabric)
        The bandwidth factor ``s`` and the scaled fabric.

    Raises
    ------
    fabric.SpecError
        If the basis is unknown, the target not positive, or no positive factor
        reaches it (the fixed part alone exceeds the target, or the network's
        cost does not depend on link bandwidth).

    Examples
    --------
    >>> import topologies
    >>> from analysis import bill_of_materials
    >>> f = topologies.build("nvl72")
    >>> usd = bill_of_materials(f).cost_usd_per_chip        # network USD per chip
    >>> s, g = equalize(f, 2 * usd)
    >>> round(s, 3), g.name
    (2.0, 'nvl72 (bandwidth x2)')
    """
    check_choice(basis, "basis", _BASES)
    # a float: a numpy float16 or float32 computes as the number it is
    target = check_number("target", target, 0, f" ({basis} per chip)", strict=True)
    c1 = _per_chip(f, basis, book)
    c2 = _per_chip(scale_links(f, 2.0), basis, book)
    slope = c2 - c1
    if not slope > 0:
        raise SpecError(f"{f.name}: its network {basis} does not grow with link bandwidth")
    s = 1.0 + (target - c1) / slope
    if not s > 0:
        raise SpecError(f"{f.name}: its fixed network {basis} per chip ({c1 - slope:.4g}) "
                         f"is above the target {target:.4g}")
    g = scale_links(f, s)
    got = _per_chip(g, basis, book)
    if not math.isclose(got, target, rel_tol=1e-6):
        # A medium changed with the rate (a per-cable price tipping the choice): one
        # secant step from the two points nearest the target.
        s = s + (target - got) * (s - 1.0) / (got - c1)
        g = scale_links(f, s)
    return s, g


def best_decode_layout(model, f, *, batch, context, tps=None, ep=None, **options):
    """The decode layout with the shortest step on ``f``, found by trying each.

    Tries tensor parallelism ``tp`` in ``tps`` (default: every power of two that
    divides the chips used, up to 16 or the largest host domain, whichever is
    larger), with ``ep`` chips used (default every chip but those a failure cut off
    from every other chip, ``f.failures.cut_off``: no layout can use such a chip, and
    decode places an instance on the chips left; ``dp = ep / tp``, experts over the
    same chips). An ``ep`` given that needs a cut-off chip is costed, and refused there.

    Parameters
    ----------
    model : str or MoEModel
    f : fabric.Fabric
    batch : int
        Sequences decoded per step.
    context : int
        Tokens of context per sequence.
    tps : sequence of int, optional
        Tensor-parallel sizes to try, each dividing the chips used.
    ep : int, optional
        Chips used, 1 to ``f``'s chips.
    **options
        Passed to :func:`decode_step`.

    Returns
    -------
    (DecodeStep, list of (str, float))
        The best step, and every layout tried with its step time (s).

    Raises
    ------
    TypeError
        ``f`` not a Fabric (a spec string: ``topologies.build`` it), ``tps`` not a sequence,
        a size or ``ep`` not an integer.
    fabric.SpecError
        ``ep`` outside 1..chips, a size outside 1..``ep`` or not dividing it.
    fabric.RoutingError
        Every chip of ``f`` cut off from every other (``ep`` not given).

    Examples
    --------
    >>> import topologies
    >>> step, tried = best_decode_layout("kimi-k2", topologies.build("nvl72"),
    ...                                  batch=1, context=4096)
    >>> min(t for _, t in tried) == step.time
    True
    """
    from fabric._units import sequence_of

    from ._decode import decode_step
    from ._models import model_config

    f = fabric_arg(f, "f")
    if ep is None:
        n = f.n_endpoints - len(f.failures.cut_off)
        if n < 1:
            raise RoutingError(f"{f.name}: every chip is cut off from every other chip; "
                             "no layout can use one")
    else:       # one check: a wrong kind a TypeError, out of 1..chips a SpecError (a ValueError)
        n = check_count(ep, "ep", 1, f"an integer number of chips in [1, {f.n_endpoints}]",
                        below=f.n_endpoints + 1)
    if tps is None:
        host = max((len(c) for c in f.domains.values()), default=1)
        limit = max(16, host)
        tps = [t for t in (2 ** i for i in range(12)) if t <= limit and n % t == 0]
    else:       # a sequence (a set's order is its hashes': 'tried' would follow them)
        tps = [check_count(t, f"tps[{i}]", 1, f"a tensor-parallel size in [1, {n}]",
                           below=n + 1)
               for i, t in enumerate(sequence_of(tps, "tps", "tensor-parallel sizes"))]
        for i, tp in enumerate(tps):
            if n % tp:          # dp = ep / tp chips: decode's layout error names no tps
                raise SpecError(f"tps[{i}] must divide the {n} chips used (dp = ep / tp), "
                                f"got tps[{i}]={tp}")
    m = model_config(model) if isinstance(model, str) else model
    best, tried = None, []
    for tp in tps:
        step = decode_step(m, f, batch=batch, context=context,
                           layout=f"tp={tp},dp={n // tp},ep={n}", **options)
        tried.append((str(step.layout), step.time))
        if best is None or step.time < best.time:
            best = step
    return best, tried
