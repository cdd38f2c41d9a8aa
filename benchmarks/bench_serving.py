"""Serving benchmark: the check set (model / measured), frontier timing, report section time.

Run ``python benchmarks/bench_serving.py``. It prints

1. every row of ``tests/data/serving.csv`` (published serving points, with
   sources; how each is expressed: ``tests/serving_check.py``): the model's
   tokens/s per user and per GPU in the source's own definition, the measured
   ones, and the symmetric error ``max(r, 1/r) - 1``; nothing is fitted to them;
2. the time of one full frontier per system (every searched layout x 10 batches
   x 3 speculative settings; target: under 10 s on 2 cores);
3. the time of the report's serving section on the default systems (target:
   under 20 s);
4. the time of the trtllm-bench runs the held-out set scores (7 rows, 4 distinct runs,
   each priced once: ``serving_heldout.trtllm_bench_run``; target: all under ~5 s on a
   quiet machine, as the suite runs them);
5. the held-out rows (``tests/data/serving_heldout.csv``: published points the
   model is not developed against; how each is expressed:
   ``tests/serving_heldout.py``): model / measured on both axes in the source's
   own definition, the rows not expressible yet with why, and the geometric-mean
   error with the count within 25%; a row measured by trtllm-bench with a stated request
   count (``serving_heldout.TRTLLM_BENCH_RUNS``) is scored by that closed loop
   (``analysis.closed_loop_run``: per-rank attention-DP scheduling, ramp and drain; lead's
   decision, session 19, adopted in session 20);
6. a diagnostic, not a score: those rows' steady state (``analysis.serving_point``) beside
   their run, and the requests in flight on average (Little's law: requests x mean latency /
   run time) of the run against the document's own ('Total Latency', 'Average request latency':
   ``serving_heldout.TRTLLM_BENCH_LATENCIES_MS``).
"""

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import serving_check as sc
import serving_heldout as sh

import analysis
import topologies
from fabric import SpecError


def check_rows():
    print(f"{'row':24s} {'definition':22s} {'user model':>10s} {'meas':>7s} {'err':>6s}  "
          f"{'GPU model':>10s} {'meas':>8s} {'err':>6s}  TPOT ms  largest part")
    for row in sc.load_rows():
        try:
            p = sc.model_point(row)
        except SpecError as e:
            print(f"{row['id']:24s} not expressible: {e}")
            continue
        mu, mg = float(row["tok_s_per_user"]), float(row["tok_s_per_gpu"])
        bd = getattr(p, "steady", p).breakdown     # a run: its steady state's step
        part = max(bd, key=bd.get)
        print(f"{row['id']:24s} {p.definition:22s} {p.tokens_per_s_user:10.2f} {mu:7.2f} "
              f"{sc.error(p.tokens_per_s_user, mu) * 100:5.0f}%  {p.tokens_per_s_gpu:10.1f} "
              f"{mg:8.1f} {sc.error(p.tokens_per_s_gpu, mg) * 100:5.0f}%  {p.tpot * 1e3:7.2f}  "
              f"{part} {bd[part] * 1e3:.2f} ms")


def frontier_timing(systems=("nvl72", "sd200-ultra", "cluster-128", "nvl72-chip3"),
                    model="deepseek-v3"):
    # DeepSeek-V3 has an MTP module: its drafts are priced (Kimi K2 has none and is searched
    # without drafts, which would time one speculative setting instead of three)
    for s in systems:
        # "<preset>-chip3": the preset without chip3 (a degraded fabric: the layout search
        # also tries instances that leave live chips idle)
        base, _, failed = s.partition("-chip")
        f = topologies.build(base if failed else s)
        if failed:
            f = f.without(chips=[f"chip{failed}"])
        t0 = time.perf_counter()
        fr = analysis.serving_frontier(model, f, isl=1024, osl=1024, n_batches=10,
                                       keep_all=True)
        dt = time.perf_counter() - t0
        spec = len({p.draft_length for p in fr.all_points})
        print(f"frontier {model} on {s}: {dt:.2f} s for {fr.evaluated} points "
              f"({len(fr.layouts)} layouts x up to 10 batches x {spec} speculative settings), "
              f"{len(fr.points)} on the frontier")


def report_timing():
    t0 = time.perf_counter()
    analysis.build_report(sections=("serving",), quiet=True)
    print(f"report serving section (default systems, built alone): "
          f"{time.perf_counter() - t0:.2f} s")


def heldout_rows():
    rows = sh.load_rows()
    print(f"\nheld-out rows ({len(rows)}; model / measured, error max(r, 1/r) - 1):")
    pairs = []
    for row in rows:
        if row["expressible"] != "yes":
            why = row["notes"].split("expressible=no:", 1)[-1].split(";")[0].strip()
            print(f"{row['id']:44s} not expressible: {why}")
            continue
        p = sh.model_point(row)
        user, gpu = sh.model_values(row, p)
        eu, eg = sh.errors(row, p)
        pairs.append((eu, eg))
        release = (f"   {sh.trtllm_release_of(row)[1]}" if row["id"] in sh.TRTLLM_ROW_RELEASES
                   else "")
        print(f"{row['id']:44s} user ({sh.user_definition(row)}) {user:8.2f} / "
              f"{float(row['tok_s_per_user']):8.2f} {eu * 100:4.0f}%   GPU ({p.definition}) "
              f"{gpu:8.1f} / {float(row['tok_s_per_gpu']):8.1f} {eg * 100:4.0f}%{release}")
    within = sum(max(pair) <= sc.TOLERANCE for pair in pairs)
    print(f"held-out: {len(pairs)} expressible of {len(rows)}, {within} within 25% on both axes, "
          f"geometric-mean error {sh.geometric_mean_error(pairs) * 100:.1f}%")


def trtllm_bench_timing():
    sh._RUNS.clear()
    rows = {r["id"]: r for r in sh.load_rows()}
    t0 = time.perf_counter()
    for rid in sh.TRTLLM_BENCH_RUNS:
        t1 = time.perf_counter()
        run = sh.trtllm_bench_run(rows[rid])
        print(f"trtllm-bench run {rid}: {run.requests}@{run.concurrency}, {run.steps} steps, "
              f"{time.perf_counter() - t1:.2f} s")
    print(f"trtllm-bench runs: {len(sh.TRTLLM_BENCH_RUNS)} rows, {len(sh._RUNS)} distinct runs, "
          f"{time.perf_counter() - t0:.2f} s in all")


def trtllm_bench_rows():
    rows = {r["id"]: r for r in sh.load_rows()}
    print("\ntrtllm-bench rows: the closed loop they are scored by beside their steady state "
          "(diagnostic):")
    for rid in sh.TRTLLM_BENCH_RUNS:
        row = rows[rid]
        run = sh.trtllm_bench_run(row)
        steady = sh.steady_point(row)
        mu, mg = float(row["tok_s_per_user"]), float(row["tok_s_per_gpu"])
        su, sg = sh.model_values(row, steady)
        cu, cg = sh.model_values(row, run)
        n, c = sh.TRTLLM_BENCH_RUNS[rid]
        total, mean = sh.TRTLLM_BENCH_LATENCIES_MS[rid]
        outs = sh.trtllm_bench_kwargs(row)[2]["output_lens"]
        print(f"{rid:44s} {n}@{c}: GPU closed loop {cg:8.1f} ({sc.error(cg, mg) * 100:3.0f}%) "
              f"steady {sg:8.1f} ({sc.error(sg, mg) * 100:3.0f}%) measured {mg:8.1f}; user "
              f"{cu:6.2f} ({sc.error(cu, mu) * 100:3.0f}%) / {su:6.2f} ({sc.error(su, mu) * 100:3.0f}%)"
              f" / {mu:6.2f}; {run.steps} steps; in flight (Little's law) "
              f"{sh.run_in_flight(run, outs):7.1f} / measured {sh.requests_in_flight(n, mean, total):7.1f}")


if __name__ == "__main__":
    check_rows()
    frontier_timing()
    report_timing()
    trtllm_bench_timing()
    heldout_rows()
    trtllm_bench_rows()
