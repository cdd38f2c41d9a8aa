"""NCCL point-to-point bookkeeping on large rank groups (session 30, runtime).

Run: ``python benchmarks/bench_p2p_large.py`` (about a minute). One line per case: the least
of 3 repeats of this process's CPU time (steadier than wall time on a shared machine), in
seconds. Run it on two trees to compare them:

* ``p2p_lanes``: a group's NVLink lanes (``_GroupView._p2p_lanes``, computed once per fabric
  and group, at the group's first cost) on one NVLink switch of 1,024 and 2,048 B200s;
* ``batches, two large pairs``: ``p2p_batches`` of an all-to-allv of 1 KiB pairs but two of
  128-256 MiB (one node of 1,024 / 2,048 B200s, newest release), whose per-rank replay is
  reached because the two large pairs take more parts than the rest (a new view each
  repeat); at 1,024 ranks also its ``cost`` under nccl@2.28.3 (retimed);
* ``pair parts, dense``: the parts of every pair of an all-to-allv whose 65,536 pairs all
  differ (256 B200s, gamma-distributed bytes, nccl@2.28.3): one plan per distinct value (a
  new view each repeat: a view keeps its plans);
* ``cost, dense``: ``analysis.cost`` of that all-to-allv under nccl@2.28.3 (its run retimed
  by later revisions) and the newest release: each distinct pair planned once a cost
  (session 31; twice per runtime before, and again for the retiming), in one numpy pass over
  the distinct pairs, found once (session 32).
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fabric
import topologies
from analysis import cost
from analysis._collectives import _GroupView, resolve_ranks
from analysis._runtime_cost import _p2p_pair_parts, p2p_batches


def view_of(f, op, M=None):
    nodes, idx = resolve_ranks(f, None)
    return _GroupView(f, op, nodes, idx, None, None if M is None else M / M.sum(), True)


def least(call, repeat=3):
    best = None
    for _ in range(repeat):
        t = time.process_time()
        out = call()
        t = time.process_time() - t
        best = t if best is None else min(best, t)
    return best, out


def main():
    for p in (1024, 2048):
        f = topologies.build(f"switch:{p},chip=b200")
        view = view_of(f, "all-reduce")
        t, lanes = least(view._p2p_lanes)
        print(f"p2p_lanes, {p} ranks in one node          {t:8.3f} s  (lanes {lanes})")
        M = np.full((p, p), 1024.0)
        M[0, 1], M[5, 9] = float(1 << 28), float(1 << 27)
        rt = fabric.runtime("nccl")
        # a new view each repeat, as a cost makes one (a view keeps what it found)
        t, k = least(lambda rt=rt, f=f, M=M: p2p_batches(rt, view_of(f, "all-to-allv", M), M))
        print(f"batches, two large pairs, {p} ranks       {t:8.3f} s  ({k} batches)")
        if p == 1024:
            t, r = least(lambda f=f, M=M: cost(f, "all-to-allv", M, runtime="nccl@2.28.3"))
            print(f"cost, two large pairs, {p} ranks, 2.28.3 {t:8.3f} s  ({r.time * 1e6:.1f} us)")
    f = topologies.build("switch:256,chip=b200")
    M = np.random.default_rng(1).gamma(1.0, 7168 * 64, (256, 256))
    rt = fabric.runtime("nccl@2.28.3")
    t, parts = least(lambda: _p2p_pair_parts(rt, view_of(f, "all-to-allv", M), M))
    print(f"pair parts, dense, 256 ranks                {t:8.3f} s  ({parts!r:.20})")
    for name in ("nccl@2.28.3", "nccl"):
        t, r = least(lambda name=name: cost(f, "all-to-allv", M, runtime=name))
        print(f"cost, dense, 256 ranks, {name:<20}{t:8.3f} s  ({r.time * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
