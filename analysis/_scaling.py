"""Scaling study: each fabric family from about 64 to about 16k chips, per-chip metrics.

Families (:data:`SCALING_FAMILIES`), each at about 64, 512, 4k and 16k chips (the
builders' nearest sizes; every metric is per chip, so sizes need not match):

* ``hyperx``: 3D Hyper-Mesh with every line all-to-all (HyperX), Co-Fabric links;
* ``torus``: 3D torus, Co-Fabric links;
* ``fat-tree``: three-tier k-ary fat tree, 400G InfiniBand;
* ``rail``: 8-GPU NVSwitch servers joined by a rail-optimized 400G network;
* ``dragonfly``: balanced dragonfly (a = 2p = 2h), 400G;
* ``domains``: 64-chip switched scale-up domains (NVLink) joined by a rail network.

Metrics per point: bisection per chip (the structural balanced cut), uniform
all-to-all throughput per chip (routed by the fabric's policy), all-reduce time
(1 GiB per rank) at the family's bandwidth-optimal algorithm, all-to-all time
(1 MiB per rank, every pair at once and routed, as the ``scattered`` algorithm's one
step: the busiest link's time plus a diameter of the slowest hop), a decode step
(kimi-k2, batch 1, on the first :data:`DECODE_CHIPS` chips) at the best layout found
by search, and network cost and power
per chip (:func:`analysis.bill_of_materials`). Collectives and decode are evaluated
on the fabric, which at 16k chips takes minutes for some families; a point above
``collective_limit`` (or ``decode_limit``) chips is left out and says so, rather
than replaced by a different model. Chips are H100s throughout, so that the
comparison is of fabrics.

Examples
--------
>>> rows = scaling_study(families=("torus",), sizes=(64,), collective_limit=64,
...                      decode_limit=0)
>>> r = rows[0]
>>> r["family"], r["chips"], round(r["bisection_per_chip_Bps"] / 1e9)
('torus', 64, 32)
"""

import math
import time

__all__ = ["SCALING_FAMILIES", "SCALING_METRICS", "draw_scaling", "scaling_study"]

#: Family -> (spec at about N chips, the algorithm its all-reduce uses).
SCALING_FAMILIES = {
    "hyperx": ("hypermesh:{shape},chip=h100", "multi-dimensional"),
    "torus": ("torus:{shape},chip=h100", "multi-dimensional"),
    "fat-tree": ("fattree:k={k},chip=h100", "multi-ring"),
    "rail": ("rail:servers={servers},gpus=8,chip=h100", "hierarchical"),
    "dragonfly": ("dragonfly:h={h},chip=h100", "multi-ring"),
    "domains": ("rail:servers={domains},gpus=64,chip=h100", "hierarchical"),
}

#: Metric -> (label, unit scale, unit name) for the figures.
SCALING_METRICS = {
    "bisection_per_chip_Bps": ("bisection per chip", 1e9, "GB/s"),
    "a2a_per_chip_Bps": ("all-to-all throughput per chip", 1e9, "GB/s"),
    "allreduce_1GiB_s": ("all-reduce, 1 GiB per rank", 1e-3, "ms"),
    "alltoall_1MiB_s": ("all-to-all, 1 MiB per rank", 1e-3, "ms"),
    "decode_step_s": ("decode step, kimi-k2, batch 1", 1e-3, "ms"),
    "network_cost_usd_per_chip": ("network cost per chip", 1e3, "k$"),
    "network_power_w_per_chip": ("network power per chip", 1.0, "W"),
}

#: Chips one decoding instance of the model spans (expert parallelism), on every fabric.
DECODE_CHIPS = 128

_SHAPES = {64: "4x4x4", 512: "8x8x8", 4096: "16x16x16", 16384: "32x32x16"}


def _spec(family, n):
    """The family's spec nearest ``n`` chips."""
    template, _ = SCALING_FAMILIES[family]
    if family in ("hyperx", "torus"):
        shape = _SHAPES.get(n) or "x".join([str(round(n ** (1 / 3)))] * 3)
        return template.format(shape=shape)
    if family == "fat-tree":
        k = max(4, 2 * round((4 * n) ** (1 / 3) / 2))           # k^3/4 chips
        return template.format(k=k)
    if family == "rail":
        return template.format(servers=max(1, n // 8))
    if family == "domains":
        return template.format(domains=max(1, n // 64))
    # dragonfly: a = 2h, p = h, g = a h + 1: 2h^2 (2h^2 + 1) chips
    h = min(range(1, 12), key=lambda h: abs(math.log(2 * h * h * (2 * h * h + 1) / n)))
    return template.format(h=h)


def _point(family, n, collective_limit, decode_limit, book):
    import numpy as np

    import topologies
    from fabric import FabricError

    from ._bom import bill_of_materials
    from ._collectives import cost
    from ._fair import best_decode_layout
    from ._metrics import metrics
    from ._traffic import link_loads, traffic

    start = time.perf_counter()
    spec = _spec(family, n)
    f = topologies.build(spec)
    chips = f.n_endpoints
    m = metrics(f)
    loads = link_loads(f, traffic(f, "all-to-all"))
    b = bill_of_materials(f, book)
    row = {"family": family, "spec": spec, "chips": chips,
           "bisection_per_chip_Bps": m.bisection_bandwidth / chips,
           "a2a_per_chip_Bps": (chips - 1) / loads.drain_time,
           "allreduce_1GiB_s": None, "allreduce_algorithm": SCALING_FAMILIES[family][1],
           # every pair at once, routed (the scattered algorithm's one step): the busiest
           # link's time for 1 MiB / chips per pair, plus a diameter of the slowest hop
           "alltoall_1MiB_s": float(loads.drain_time * 2**20 / chips
                                    + m.diameter * float(f.edge_arrays.latency.max())), "decode_step_s": None, "decode_layout": "",
           "network_cost_usd_per_chip": b.cost_usd_per_chip,
           "network_power_w_per_chip": b.power_w_per_chip, "note": ""}
    notes = []
    if chips <= collective_limit:
        try:
            ar = cost(f, "all-reduce", 2**30, row["allreduce_algorithm"])
        except FabricError as e:       # e.g. hierarchical on a single domain
            notes.append(f"{row['allreduce_algorithm']}: {e}; the fastest applicable used")
            ar = cost(f, "all-reduce", 2**30)
        row["allreduce_1GiB_s"], row["allreduce_algorithm"] = float(ar.time), ar.algorithm
    else:
        notes.append(f"collectives not evaluated above {collective_limit} chips")
    if chips <= decode_limit:
        try:
            step, _ = best_decode_layout("kimi-k2", f, batch=1, context=4096,
                                         ep=min(chips, DECODE_CHIPS))
            row["decode_step_s"], row["decode_layout"] = step.time, str(step.layout)
        except (ValueError, FabricError) as e:
            notes.append(f"decode: {e}")
    else:
        notes.append(f"decode not evaluated above {decode_limit} chips")
    row["note"] = "; ".join(notes)
    row["seconds"] = float(np.round(time.perf_counter() - start, 3))
    return row


def scaling_study(families=tuple(SCALING_FAMILIES), sizes=(64, 512, 4096, 16384), *,
                  collective_limit=512, decode_limit=512, book="street-2026",
                  quiet=True, executor=None):
    """Per-chip metrics of each family at each size; a list of tidy rows (SI units).

    Parameters
    ----------
    families : sequence of str
        Keys of :data:`SCALING_FAMILIES`.
    sizes : sequence of int
        Target chip counts (each family's nearest buildable size is used).
    collective_limit, decode_limit : int
        Largest chip count at which collectives and decode are evaluated on the
        fabric (they take minutes at 16k chips on two cores).
    book : str
        Cost book for cost and power.

    Returns
    -------
    list of dict
        One row per (family, size): ``spec``, ``chips``, every key of
        :data:`SCALING_METRICS` (None where not evaluated, with ``note`` saying
        why), ``seconds`` spent.
    """
    from ._sweep import sweep

    unknown = [f for f in families if f not in SCALING_FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {', '.join(SCALING_FAMILIES)}")
    points = [{"family": fam, "n": n, "collective_limit": collective_limit,
               "decode_limit": decode_limit, "book": book} for fam in families for n in sizes]
    return sweep(_point, points, executor=executor, quiet=quiet, desc="scaling")


def draw_scaling(rows, metric, ax=None):
    """One metric against chips, one line per family (log-log)."""
    from . import _plots

    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.figure().add_subplot()
    label, scale, unit = SCALING_METRICS[metric]
    for i, fam in enumerate(dict.fromkeys(r["family"] for r in rows)):
        pts = [(r["chips"], r[metric] / scale) for r in rows
               if r["family"] == fam and r[metric] is not None]
        if pts:
            x, y = zip(*pts)
            ax.plot(x, y, marker="os^Dv<"[i % 6], markersize=3.5, label=fam,
                    color=_plots.palette()[i % len(_plots.palette())])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("chips")
    ax.set_ylabel(f"{label} ({unit})")
    ax.legend(fontsize="x-small")
    return ax
