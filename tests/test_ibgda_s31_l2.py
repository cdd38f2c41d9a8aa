"""Session 31: pplx-kernels' README rows are priced with L2 as its benchmark leaves it.

tests/bench_all_to_all.py (7af3059) flushes nothing; between two samples it runs c10d's and
NVSHMEM's all-to-alls on 4 tensors of 256 x tokens x 7392 B per rank: 7.6 MB at 1 token (the
H100's L2 holds 50 MB), 969 MB at 128. So the 1-token rows read the token and the expert
outputs from L2 (``l2_flushed=False``, as the ep_bench rows), the 128-token rows from HBM.
"""
import fidelity
import fidelity_heldout_moe as H

from analysis import moe_exchange


def test_pplx_rows_read_l2_as_the_benchmark_leaves_it():
    assert (H._pplx_l2_flushed(1), H._pplx_l2_flushed(128)) == (False, True)
    rows = {r["id"]: r for r in fidelity.heldout_rows()}
    f = H._h100_nodes(1)          # the fabric the rows run on (cached)
    for tokens, flushed in ((1, False), (128, True)):
        r = moe_exchange(f, "deepseek-v3", tokens, 8, kernel="pplx", dispatch_bytes=1 + 4 / 128,
                         combine_bytes=2, routing="uniform", l2_flushed=flushed)
        got, _ = H.CASES[f"pplx-h100-ep8-bs{tokens}-nvlink-combine"](
            rows[f"pplx-h100-ep8-bs{tokens}-nvlink-combine"])
        assert got == r.combine * 1e6
