"""benchmarks/bench_decode.py's check of the seed's claims runs on the model as it is.

Session 23's attention-DP gather (TensorRT-LLM's allgather + reducescatter at tp=1, dp>1)
made the tp=1 points' MoE collectives an all-gather and a reduce-scatter; the benchmark's
ring/pairwise baseline named only all-reduce and all-to-all and raised KeyError, and no test
ran it. This one does (about 4 s).
"""
import importlib.util
import math
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_decode.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_decode", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_collective_the_decode_step_records_has_a_message_passing_baseline():
    import topologies

    bench = _bench()
    fab = topologies.build("sd200-ultra")
    for tp in (1, 8):
        sym, base, rdma = bench._comm_ratios(fab, "hypothetical-2.8t", 1, tp, 4096)
        assert all(math.isfinite(x) and x > 0 for x in (sym, base, rdma)), (tp, sym, base, rdma)


def test_the_seed_claims_are_checked_with_ranges():
    claims = list(_bench().examine_seed_claims())
    assert len(claims) == 5
    for c in claims:
        assert math.isfinite(c.modelled_min) and 0 < c.modelled_min <= c.modelled_max, c
        assert c.reproduced == (c.modelled_min <= c.reported <= c.modelled_max), c
