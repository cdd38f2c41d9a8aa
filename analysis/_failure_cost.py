"""The cost of a failure: a fabric against its degraded copy (drain time, throughput, latency).

Kept apart from :mod:`analysis._traffic` (loads) and :mod:`analysis._throughput`
(the LP), which it uses both of, so that neither imports the other.
"""

import dataclasses

import numpy as np

from fabric._fabric_arg import fabric_arg
from fabric._failures import failure_label
from fabric._units import flag_of, text_of

from ._throughput import throughput
from ._traffic import TrafficMatrix, link_loads, traffic

__all__ = ["FailureCost", "failure_cost"]


@dataclasses.dataclass(frozen=True)
class FailureCost:
    """What failing some links or chips costs a fabric: each figure before and after.

    Attributes
    ----------
    system, failure : str
    drain_time : tuple of float
        Seconds to drain the traffic (routed by the policy), before and after.
    throughput : tuple of float or None
        Max-concurrent-flow K (1/s), before and after, if computed.
    mean_latency, max_latency : tuple of float
        One-way path latency over ordered chip pairs (s), before and after.
    """

    system: str
    failure: str
    drain_time: tuple
    throughput: tuple
    mean_latency: tuple
    max_latency: tuple

    def rows(self):
        """Tidy rows (system, failure, metric, before, after, change) for tables and plots.

        ``change`` is after / before - 1 (a slowdown is positive for times, and a
        loss is negative for throughput).
        """
        out = []
        for metric in ("drain_time", "throughput", "mean_latency", "max_latency"):
            pair = getattr(self, metric)
            if pair is None:
                continue
            before, after = pair
            out.append({"system": self.system, "failure": self.failure, "metric": metric,
                        "before": before, "after": after, "change": after / before - 1})
        return out


def failure_cost(fabric, links=(), chips=(), traffic_name="all-to-all", nbytes=1.0, *,
                 with_throughput=False, label=None, **traffic_options):
    """Compare a fabric with its degraded copy ``fabric.without(links, chips)``.

    Both carry the same work: the named traffic over the ranks that survive (after a
    chip failure the intact fabric carries only the survivors' traffic, the failed
    chip's rows and columns empty), and latency is over the ordered pairs of surviving
    chips on both. (Before session 12 the intact side carried every rank's traffic, so
    a failed chip read as a speed-up: ``fattree:k=4`` without chip0, drain -6.7%.)
    On a grid the degraded side's routes are local repairs (``router.local_repair``), so
    its drain time and latencies are upper bounds on a fabric that re-routes globally;
    ``with_throughput`` gives the max-concurrent-flow figure, the other side of it.

    Parameters
    ----------
    fabric : fabric.Fabric
    links : sequence
        Links to fail (``"u-v"`` or ``(u, v)``).
    chips : sequence
        Chips to fail (names or ranks).
    traffic_name : str
        A traffic pattern of :func:`traffic`.
    nbytes : float
        Bytes per pair, as :func:`traffic` takes them.
    with_throughput : bool
        Also solve the max-concurrent-flow figure (a linear program).
    label : str, optional
        What the failure is called; default what this call fails, e.g. "without 1 link and 1
        node" (on a degraded ``fabric`` too, whose name counts every earlier failure).
    **traffic_options
        Passed to :func:`traffic`.

    Returns
    -------
    FailureCost
        Each figure intact and degraded: drain times in seconds, latencies in seconds.

    Examples
    --------
    >>> import topologies
    >>> c = failure_cost(topologies.build("torus:4x4"), links=[("chip0", "chip1")])
    >>> round(c.drain_time[1] / c.drain_time[0], 3)   # the bypass carries the failed link's bytes
    2.0
    >>> round(c.max_latency[0] * 1e9), round(c.max_latency[1] * 1e9)   # 4 hops, then 6
    (920, 1380)
    >>> c = failure_cost(topologies.build("fattree:k=4"), chips=["chip0"])
    >>> c.drain_time[1] == c.drain_time[0]            # the survivors' all-to-all is unchanged
    True
    """
    fabric = fabric_arg(fabric)
    with_throughput = flag_of(with_throughput, "with_throughput")   # (was read by its truth)
    degraded = fabric.without(links=links, chips=chips)
    live = degraded.endpoints
    work = traffic(degraded, traffic_name, nbytes, **traffic_options)
    out = {}
    for key, f in (("before", fabric), ("after", degraded)):
        t = work
        if f.n_endpoints != work.n:     # the intact fabric: the survivors' traffic only
            at = {c: i for i, c in enumerate(f.endpoints)}
            pos = np.array([at[c] for c in live], dtype=np.int64)
            dense = np.zeros((f.n_endpoints, f.n_endpoints))
            dense[np.ix_(pos, pos)] = work.dense()
            t = TrafficMatrix(work.name, f.n_endpoints, data=dense)
        ll = link_loads(f, t)
        ep = np.array([f.node_index[c] for c in live], dtype=np.int64)
        s, d = np.nonzero(~np.eye(len(ep), dtype=bool))
        lat = f.router.latency(ep[s], ep[d])
        k = None
        if with_throughput:
            k = throughput(f, t).k
        out[key] = (ll.drain_time, k, float(lat.mean()), float(lat.max()))
    b, a = out["before"], out["after"]
    failure = (text_of(label, "label", optional=True) or failure_label(fabric, degraded)
               or "nothing")
    return FailureCost(system=fabric.name, failure=failure, drain_time=(b[0], a[0]),
                       throughput=(b[1], a[1]) if with_throughput else None, mean_latency=(b[2],
                                                                                           a[2]),
                       max_latency=(b[3], a[3]))
