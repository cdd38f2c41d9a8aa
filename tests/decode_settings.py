"""One spelling of ``analysis._decode._settings`` with :func:`analysis.decode_step`'s defaults,
for tests that look at a step's resolved settings (which GEMM, router or attention table a
step takes). The engine is TensorRT-LLM unless told; any keyword overrides its default."""

from analysis import _decode as D


def decode_settings(fabric, model, batch, layout, **kw):
    args = {"context": 2048, "tokens_per_sequence": 1, "transport": None,
            "algorithm": "auto", "skew": 0.0, "overlap": 0.0, "fusion_factor": 1.0,
            "launch_overhead": D.LAUNCH_OVERHEAD.value, "hbm_efficiency": None,
            "compute_efficiency": None, "dispatch_bytes": None, "combine_bytes": None,
            "chip": None, "collective": None, "runtime": None, "ep_kernel": None,
            "cuda_graphs": True, "graph_kernel_overhead": D.GRAPH_KERNEL_OVERHEAD.value,
            "engine": "trtllm"}
    args.update(kw)
    return D._settings(model, fabric, batch=batch, layout=layout, **args)
