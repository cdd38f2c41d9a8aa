"""Decode-model benchmark: timing against the issue's targets, sensitivity, the seed's claims.

Run ``python benchmarks/bench_decode.py``. It prints

1. the time of one full decode-step breakdown for ``kimi-k2`` on ``sd200-ultra``
   (target: under 1 s), with the breakdown itself;
2. a sensitivity (tornado) sweep over fabric latency, link bandwidth, HBM
   bandwidth, fusion factor and transport (target: under 30 s);
3. :func:`compare_systems`: kimi-k2 and hypothetical-2.8t on sd200-ultra,
   cluster-128 and nvl72, the additive parts of the step (for stacked bars);
4. :func:`examine_seed_claims`: which of the seed article's figures the model
   reproduces, and under which assumptions;
5. :func:`against_deepep`: dispatch and combine against DeepEP's published
   expert-parallel decode latencies (not fitted).

Nothing here is tuned to reproduce a reported figure: every run uses the
library's defaults except the one parameter being varied, and the grids are
stated in the code.
"""

import dataclasses
import itertools
import os
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # a checkout

import analysis
import topologies
from fabric import Fabric

SYSTEM = "sd200-ultra"
BASE = {"batch": 64, "context": 4096, "layout": "tp=8"}


def _scaled(fab, *, latency=1.0, bandwidth=1.0):
    """A copy of ``fab`` with every link's latency and bandwidth scaled."""
    G = fab.graph.copy()
    for _, _, d in G.edges(data=True):
        d["latency"] *= latency
        d["bandwidth"] *= bandwidth
    return Fabric.from_graph(G, fab.endpoints, name=f"{fab.name}*lat{latency}*bw{bandwidth}",
                             domains=fab.domains, chip=fab.chip, assumptions=fab.assumptions,
                             family=fab.family, params=dict(fab.params))


def full_breakdown(model="kimi-k2", system=SYSTEM, **kw):
    """One decode step with its breakdown, and the seconds it took to compute."""
    fab = topologies.build(system)
    kw = {**BASE, **kw}
    t0 = time.perf_counter()
    r = analysis.decode_step(model, fab, **kw)
    return r, time.perf_counter() - t0


@dataclass(frozen=True)
class Sensitivity:
    """Step time at the low and high value of one parameter, others at the base."""

    parameter: str
    low: str
    high: str
    time_low: float
    time_high: float
    base_time: float


def sensitivity(model="kimi-k2", system=SYSTEM, **kw):
    """The tornado sweep: each parameter to a low and a high value, one at a time."""
    fab = topologies.build(system)
    kw = {**BASE, **kw}
    base = analysis.decode_step(model, fab, **kw).time
    chip = fab.chip

    def run(f=fab, **extra):
        return analysis.decode_step(model, f, **{**kw, **extra}).time

    rows = [
        Sensitivity("fabric latency", "x0.5", "x2", run(_scaled(fab, latency=0.5)),
                    run(_scaled(fab, latency=2.0)), base),
        Sensitivity("link bandwidth", "x0.5", "x2", run(_scaled(fab, bandwidth=0.5)),
                    run(_scaled(fab, bandwidth=2.0)), base),
        Sensitivity("HBM bandwidth", "x0.5", "x2",
                    run(chip=dataclasses.replace(chip, hbm_bandwidth=chip.hbm_bandwidth / 2)),
                    run(chip=dataclasses.replace(chip, hbm_bandwidth=chip.hbm_bandwidth * 2)),
                    base),
        Sensitivity("fusion factor", "1", "10", run(fusion_factor=1.0),
                    run(fusion_factor=10.0), base),
        Sensitivity("transport", "loadstore", "rdma", run(transport="loadstore"),
                    run(transport="rdma"), base),
    ]
    return rows


@dataclass(frozen=True)
class ClaimCheck:
    """One of the seed's figures against the model.

    ``reproduced`` is True when the reported figure lies inside the modelled
    range ``[modelled_min, modelled_max]`` over the assumption sets listed in
    ``assumptions``; ``note`` says where in that range it falls.
    """

    claim: str
    reported: float
    modelled_min: float
    modelled_max: float
    unit: str
    reproduced: bool
    assumptions: str
    note: str


SYMMETRIC = frozenset({"one-shot", "two-shot"})   # loads/stores into peers' symmetric buffers
BASELINE = {"all-reduce": "ring", "all-to-all": "pairwise", "all-gather": "ring",
            "reduce-scatter": "ring"}   # NCCL-style message algorithms


def _comm_ratios(fab, model, batch, tp, context):
    """Record the decode step's collectives and compare algorithms and transports.

    Returns (MoE-layer communication time with the best non-symmetric algorithm
    over the best symmetric one, the same with ring / pairwise as the baseline,
    RDMA over load/store with automatic choice), each for one MoE layer.
    """
    calls = []

    def rec(fabric, op, nbytes, **kw):
        # algorithms compared at the hardware floor: NCCL's runtime offers no symmetric kernels
        kw.setdefault("runtime", "ideal")
        r = analysis.cost(fabric, op, nbytes, **kw)
        calls.append((op, r))
        return r

    analysis.decode_step(model, fab, batch=batch, context=context, layout=f"tp={tp}",
                         transport="loadstore", collective=rec)
    moe = calls[-3:] if tp > 1 else calls[-2:]        # the MoE layer's all-reduce, a2a, a2a
    sym = nonsym = base = 0.0
    for op, r in moe:
        times = {a: t for a, t in r.candidates if isinstance(t, float)}
        sym += min(t for a, t in times.items() if a in SYMMETRIC)
        nonsym += min(t for a, t in times.items() if a not in SYMMETRIC)
        base += times[BASELINE[op]]
    layer = analysis.decode_step(model, fab, batch=batch, context=context, layout=f"tp={tp}",
                                 transport="loadstore").layers[-1].comm
    layer_rdma = analysis.decode_step(model, fab, batch=batch, context=context,
                                      layout=f"tp={tp}", transport="rdma").layers[-1].comm
    return nonsym / sym, base / sym, layer_rdma / layer


def examine_seed_claims():
    """Run the decode model against the seed article's three figures.

    The figures (docs/sources.md s.1; none confirmed elsewhere): 5.85 ms per token
    on a 2.8T-parameter MoE on the 128-chip SD200 Ultra; kernel fusion cutting
    kernel launches 10x; symmetric memory cutting collective time 3.5x.

    What is run (no parameter is tuned to a reported figure; every other
    parameter is the library default, e.g. 4 us per kernel launch, peak HBM
    bandwidth and FLOP/s, no overlap unless stated):

    * 5.85 ms/token: ``hypothetical-2.8t`` (Kimi K2's architecture with 1056
      experts; the seed's model is unpublished) on ``sd200-ultra`` (chip
      ``sd200-chip``, itself an assumption), one user (batch 1, so per-token
      latency), context 4096, over the grid tp in {1, 2, 4, 8} x fusion in
      {1, 10} x overlap in {0, 1}, collectives' transport chosen by the model.
    * 10x fewer kernels: a kernel count is an input here (``fusion_factor``),
      not an output; the model says what it buys: step time at fusion 1 over 10
      on the same grid.
    * 3.5x from symmetric memory, read two ways, on one MoE layer's collectives
      (TP all-reduce, dispatch, combine) at batch {1, 64} x tp {1, 2, 4, 8}:
      (a) load/store transport, best symmetric-memory algorithm (one-shot /
      two-shot) against the best other algorithm, and against ring / pairwise
      (NCCL-style defaults); (b) RDMA against load/store transport, each with the
      fastest algorithm it allows (symmetric-memory algorithms need load/store).

    What the model reproduces (run of 2026-12-02, library defaults; the records
    returned carry the figures of each run, and ``main()`` prints them). Run of 2026-12-03
    16:15 UTC (main fe641a6, with the kernels' minimum durations and GEMM fixed parts):
    5.85 ms is no longer reached: 6.32-14.84 ms over the grid, the closest at tp=8, 10x
    fusion, overlap 1 (weights read 5.79 ms at 0.78 of 1.6 TB/s); 10x fusion buys
    1.23-1.43x. Run of 2026-12-03 at the end of session 5 (main 1d0a88d, MLA's latent
    down-projections read whole on every tensor-parallel rank): 6.97-14.84 ms, the closest
    at the same point (weights read 6.44 ms); 10x fusion buys 1.23-1.39x. The 2026-12-02
    reading below is kept for the record:

    * **5.85 ms/token: reproducible only under assumptions.** The model spans
      5.3-15.1 ms per token over the grid. It reaches 5.85 ms only with kernel
      fusion of 10x and tensor parallelism 8 (5.3 ms, with or without overlap);
      without fusion, launch bubbles alone (25 kernels per layer x 61 layers x
      4 us = 6.1 ms) exceed the reported figure. It also rests on the assumed chip
      (1.6 TB/s HBM; the seed names none) and on a hypothetical 2.8T config; at
      larger batch the per-user time grows. So the figure is *consistent* with
      the model only if the seed's fusion and chip assumptions hold, which it
      cannot check.
    * **10x fewer kernels: not reproducible (an input).** What it buys: 1.6-2.0x
      shorter steps at batch 1, because launch bubbles dominate an unfused step.
    * **3.5x from symmetric memory: bracketed, not pinned.** On load/store, the
      best symmetric-memory algorithms beat the best other algorithm by only
      0.44-1.9x per MoE layer's collectives, beat ring all-reduce + pairwise
      all-to-all by 15-92x, and load/store beats RDMA by 2.4-3.4x (session 26: an
      RDMA all-to-all's further work batches no longer post every message again),
      just under the reported 3.5x; which baseline the seed compared against
      decides whether the model agrees, and the article does not say.

    Returns
    -------
    tuple of ClaimCheck
    """
    fab = topologies.build(SYSTEM)
    grid = list(itertools.product((1, 2, 4, 8), (1.0, 10.0), (0.0, 1.0)))
    times = {}
    for tp, fusion, overlap in grid:
        r = analysis.decode_step("hypothetical-2.8t", fab, batch=1, context=4096,
                                 layout=f"tp={tp}", fusion_factor=fusion, overlap=overlap)
        times[tp, fusion, overlap] = r.time
    reported = 5.85e-3
    ok = sorted(k for k, t in times.items() if t <= reported)
    t = list(times.values())
    claims = [ClaimCheck(
        "5.85 ms per token, 2.8T MoE, 128 chips", reported, min(t), max(t), "s",
        min(t) <= reported <= max(t),
        "hypothetical-2.8t, sd200-chip (assumed 1.6 TB/s, 300 TFLOPS), batch 1, context "
        "4096; grid tp {1,2,4,8} x fusion {1,10} x overlap {0,1}",
        ("at or under 5.85 ms for (tp, fusion, overlap) in " + ", ".join(map(str, ok)))
        if ok else "not reached anywhere on the grid")]

    ratios = [times[tp, 1.0, ov] / times[tp, 10.0, ov] for tp in (1, 2, 4, 8)
              for ov in (0.0, 1.0)]
    claims.append(ClaimCheck(
        "10x fewer kernels (fusion)", 10.0, min(ratios), max(ratios), "x step time", False,
        "fusion_factor is an input: 1 versus 10 on the grid above",
        "a kernel count cannot be reproduced by this model; the ratios are what 10x fewer "
        "launches buy in step time"))

    best, vs_base, rdma = [], [], []
    for batch, tp in itertools.product((1, 64), (1, 2, 4, 8)):
        a, b, c = _comm_ratios(fab, "hypothetical-2.8t", batch, tp, 4096)
        best.append(a)
        vs_base.append(b)
        rdma.append(c)
    for name, vals, how in (
            ("symmetric memory 3.5x: best symmetric vs best other algorithm (load/store)",
             best, "one-shot/two-shot against the fastest non-symmetric algorithm"),
            ("symmetric memory 3.5x: symmetric vs ring/pairwise (load/store)", vs_base,
             "one-shot/two-shot against ring all-reduce and pairwise all-to-all"),
            ("symmetric memory 3.5x: load/store vs RDMA transport", rdma,
             "fastest algorithm each transport allows")):
        inside = min(vals) <= 3.5 <= max(vals)
        where = ("3.5x is inside the modelled range" if inside else
                 "the model gives less than 3.5x" if max(vals) < 3.5 else
                 "the model gives more than 3.5x")
        claims.append(ClaimCheck(
            name, 3.5, min(vals), max(vals), "x MoE-layer comm time", inside,
            how + "; batch {1, 64} x tp {1, 2, 4, 8}, hypothetical-2.8t on sd200-ultra",
            where))
    return tuple(claims)


def compare_systems(models=("kimi-k2", "hypothetical-2.8t"),
                    systems=("sd200-ultra", "cluster-128", "nvl72"), batches=(1, 64)):
    """Step time and its additive parts for each model x system x batch (layout tp=8).

    Returns a list of (model, system, batch, DecodeStep).
    """
    out = []
    for system in systems:
        fab = topologies.build(system)
        for model, batch in itertools.product(models, batches):
            out.append((model, system, batch,
                        analysis.decode_step(model, fab, batch=batch, context=4096,
                                             layout="tp=8")))
    return out


#: DeepEP low-latency kernels (pure RDMA), H800 + CX7 400 Gb/s InfiniBand, 128 tokens per
#: rank, hidden 7168, top-8, FP8 dispatch, BF16 combine: EP 128, dispatch 192 us, combine
#: 369 us (deepseek-ai/DeepEP README, "Low-latency kernels with pure RDMA").
DEEPEP_EP128 = (192e-6, 369e-6)


def against_deepep():
    """The model's dispatch and combine for DeepEP's published decode setting.

    deepseek-v3 on cluster-128 (H100 servers, one 400 Gb/s NIC per GPU, the
    closest preset to DeepEP's H800 testbed), 128 sequences per rank (batch
    16384, dp=128, ep=128), one token each, FP8 dispatch (with DeepEP's per-128
    scales) and BF16 combine, through the ``deepep-low-latency`` exchange kernel
    (every (token, expert) copy over RDMA across servers, NVLink inside one). Context 1 keeps the KV cache small;
    it does not enter dispatch or combine. Nothing is fitted to the measurement.

    Returns (modelled dispatch, modelled combine, published dispatch, published combine),
    seconds.
    """
    fab = topologies.build("cluster-128")
    r = analysis.decode_step("deepseek-v3", fab, batch=128 * 128, context=1, layout="tp=1",
                             dispatch_bytes=1.0 + 4 / 128, combine_bytes=2.0,
                             ep_kernel="deepep-low-latency")
    moe = r.layers[-1]
    return moe.dispatch, moe.combine, *DEEPEP_EP128


def figures(outdir, systems_rows=None, tornado_rows=None):
    """Stacked-bar breakdown of :func:`compare_systems` and the tornado of :func:`sensitivity`.

    Writes ``decode_breakdown`` and ``decode_tornado`` (PDF, SVG, PNG) into
    ``outdir`` through the library's reproducible :func:`analysis.save_figure`, in
    the paper style. Returns the paths written.
    """
    import matplotlib.pyplot as plt

    systems_rows = systems_rows if systems_rows is not None else compare_systems()
    tornado_rows = tornado_rows if tornado_rows is not None else sensitivity()
    parts = ("attention", "ffn", "head", "exposed_comm", "launch")
    tidy = [{"system": f"{model} / {system} / b={batch}", "component": part,
             "time": getattr(r.breakdown, part)}
            for model, system, batch, r in systems_rows for part in parts]
    written = []
    with analysis.paper_style("double", height=3.2):
        fig, ax = plt.subplots()
        analysis.plot_stacked_bars(tidy, ax=ax)
        ax.set_title("decode step, context 4096, tp=8")
        written += analysis.save_figure(fig, os.path.join(outdir, "decode_breakdown"))
        plt.close(fig)
    with analysis.paper_style("single", height=2.2):
        fig, ax = plt.subplots()
        base = tornado_rows[0].base_time * 1e3
        order = sorted(tornado_rows, key=lambda s: -abs(s.time_high - s.time_low))
        for i, s in enumerate(order):
            lo, hi = s.time_low * 1e3 - base, s.time_high * 1e3 - base
            ax.barh(i, lo, left=base, color="#0072B2")
            ax.barh(i, hi, left=base, color="#E69F00")
            for d, label in ((lo, s.low), (hi, s.high)):   # label each bar at its outer end
                ax.text(base + d, i, f" {label} " if d else label, va="center",
                        ha="left" if d > 0 else "right", fontsize="x-small")
        ax.axvline(base, color="black", linewidth=0.5)
        ax.set_yticks(range(len(order)), [s.parameter for s in order])
        ax.invert_yaxis()
        ax.set_xlabel("step time (ms); blue: low value, orange: high value")
        written += analysis.save_figure(fig, os.path.join(outdir, "decode_tornado"))
        plt.close(fig)
    return written


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figures", metavar="DIR", help="also write the two figures into DIR")
    args = ap.parse_args(argv)
    r, secs = full_breakdown()
    b = r.breakdown
    print(f"[1] kimi-k2 on {SYSTEM}, {BASE}: step {b.total * 1e3:.3f} ms "
          f"({r.tokens_per_s_user:.1f} tok/s/user, {r.tokens_per_s_system:.0f} tok/s system)")
    print(f"    attention {b.attention * 1e3:.3f} ms, ffn {b.ffn * 1e3:.3f} ms, head "
          f"{b.head * 1e3:.3f} ms, exposed comm {b.exposed_comm * 1e3:.3f} ms, launch "
          f"{b.launch * 1e3:.3f} ms")
    print(f"    computed in {secs:.4f} s (target < 1 s: ratio {secs / 1.0:.4f})")

    t0 = time.perf_counter()
    rows = tornado = sensitivity()
    secs = time.perf_counter() - t0
    print(f"[2] sensitivity around kimi-k2 on {SYSTEM} {BASE}, base "
          f"{rows[0].base_time * 1e3:.3f} ms")
    for s in rows:
        print(f"    {s.parameter:15s} {s.low:>9s}: {s.time_low * 1e3:8.3f} ms   "
              f"{s.high:>9s}: {s.time_high * 1e3:8.3f} ms")
    print(f"    computed in {secs:.3f} s (target < 30 s: ratio {secs / 30:.4f})")

    t0 = time.perf_counter()
    rows = systems = compare_systems()
    secs = time.perf_counter() - t0
    print("[3] systems (context 4096, tp=8; ms: attention / ffn / head / exposed comm / launch"
          " = step)")
    for model, system, batch, r in rows:
        b = r.breakdown
        print(f"    {model:18s} {system:12s} batch {batch:3d}: {b.attention * 1e3:6.3f} / "
              f"{b.ffn * 1e3:6.3f} / {b.head * 1e3:5.3f} / {b.exposed_comm * 1e3:6.3f} / "
              f"{b.launch * 1e3:5.3f} = {r.time * 1e3:7.3f} ms, "
              f"{r.tokens_per_s_user:6.1f} tok/s/user")
    print(f"    computed in {secs:.1f} s (first collective on a fabric plans and routes it)")

    print("[4] the seed's claims")
    for c in examine_seed_claims():
        print(f"    {c.claim}: reported {c.reported:g}, modelled {c.modelled_min:.4g} .. "
              f"{c.modelled_max:.4g} {c.unit}; reproduced: {c.reproduced}")
        print(f"      assumptions: {c.assumptions}")
        print(f"      {c.note}")
    d, c, pd, pc = against_deepep()
    print(f"[5] against DeepEP's published EP=128 decode kernels (H800): dispatch modelled "
          f"{d * 1e6:.0f} us vs {pd * 1e6:.0f} us published ({d / pd:.2f}x), combine "
          f"{c * 1e6:.0f} us vs {pc * 1e6:.0f} us ({c / pc:.2f}x)")
    if args.figures:
        for path in figures(args.figures, systems, tornado):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
