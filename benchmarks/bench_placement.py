"""Placement of decode instances on large degraded fabrics: seconds per call.

``analysis.instance_chips`` / ``analysis.idle_chips`` on fabrics whose reachability is not
transitive (chips that lost different planes of a multi-plane switch; GPUs whose NIC link
failed), and the pairwise route table behind them (``analysis._decode._reach``) on large
direct fabrics with one failed chip. Each figure is one cold call (caches cleared: a fresh
fabric object per case), wall time on this machine.

Run: ``PYTHONPATH=. python benchmarks/bench_placement.py``
"""

import itertools
import random
import resource
import time

import numpy as np

import topologies
from analysis import _decode as D


def _complements():
    # switch:70,planes=8: chip 2i keeps the planes of the i-th four-plane set holding plane
    # 0, chip 2i+1 the other four: each chip misses only its twin (2^35 maximal cliques)
    sets = [s for s in itertools.combinations(range(8), 4) if 0 in s]
    links = []
    for i, s in enumerate(sets):
        links += [(f"chip{2 * i}", f"sw{p}") for p in range(8) if p not in s]
        links += [(f"chip{2 * i + 1}", f"sw{p}") for p in s]
    return topologies.build("switch:70,planes=8").without(links=links)


def _plane_losses(n, planes, lost, seed=0):
    rng = random.Random(seed)
    f = topologies.build(f"switch:{n},planes={planes}")
    pairs = set()
    while len(pairs) < lost:
        pairs.add((rng.randrange(n), rng.randrange(planes)))
    return f.without(links=[(f"chip{c}", f"sw{p}") for c, p in sorted(pairs)])


def _dead_nics(servers, gpus, dead, seed=0):
    rng = random.Random(seed)
    f = topologies.build(f"rail:servers={servers},gpus={gpus}")
    chips = rng.sample(range(servers * gpus), dead)
    return f.without(links=[(f"chip{c}", f"nic{c}") for c in sorted(chips)])


def _timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def placement(name, make, cases):
    for chips, tp in cases:
        f = make()                                   # fresh object: no cached tables
        t_r, _ = _timed(D._reach, f)
        t_i, sel = _timed(D.instance_chips, f, chips, tp=tp)
        t_c, idle = _timed(D.idle_chips, f, chips, tp=tp)
        ok = bool(D._reach(f)[np.ix_(sel, sel)].all())
        print(f"{name:44s} chips={chips:3d} tp={tp}  reach {t_r:6.3f} s  instance {t_i:6.3f} s "
              f"(pairwise {'yes' if ok else 'no '})  idle {t_c:6.3f} s = {idle}")


def reach_table(name, make):
    f = make()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, R = _timed(D._reach, f)
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{name:44s} {f.n_endpoints} live chips: route table {t:6.2f} s, "
          f"peak RSS +{grew:.0f} MB (all pairs reach: {bool(R.all())})")


def unreachable(name, make):
    """Router.unreachable_pairs over every live chip, alone (no n x n route table built)."""
    f = make()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, (i, _) = _timed(f.router.unreachable_pairs, f.endpoint_indices)
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{name:44s} {f.n_endpoints} live chips: unreachable_pairs {t:6.2f} s, "
          f"peak RSS +{grew:.0f} MB ({len(i)} unreachable pairs)")


def main():
    placement("switch:70,planes=8, complementary planes", _complements,
              [(8, 8), (35, 1), (36, 1)])
    placement("switch:256,planes=8, 200 plane links lost", lambda: _plane_losses(256, 8, 200),
              [(8, 8), (64, 8)])
    placement("rail:servers=128,gpus=8, 16 NIC links lost", lambda: _dead_nics(128, 8, 16),
              [(8, 8), (16, 8), (64, 8)])
    reach_table("hypermesh:64x64 without chip7, chip5-chip0",
                lambda: topologies.build("hypermesh:64x64").without(
                    chips=["chip7"], links=[("chip5", "chip0")]))
    reach_table("torus:16x16x16 without chip7",
                lambda: topologies.build("torus:16x16x16").without(chips=["chip7"]))
    reach_table("dragonfly:h=6 without chip7, r16.1-r16.4",
                lambda: topologies.build("dragonfly:h=6").without(
                    chips=["chip7"], links=[("r16.1", "r16.4")]))
    reach_table("fattree:k=32 without chip7, agg30.0-core0",
                lambda: topologies.build("fattree:k=32").without(
                    chips=["chip7"], links=[("agg30.0", "core0")]))
    unreachable("dragonfly:h=9 without chip7, r16.1-r16.4",
                lambda: topologies.build("dragonfly:h=9").without(
                    chips=["chip7"], links=[("r16.1", "r16.4")]))


if __name__ == "__main__":
    main()
