"""Units of the numeric fields the CLI prints as JSON (one table, every command).

Every numeric field of a command's JSON says its unit: in its name (``total_s``,
``size_bytes``, ``network_power_w_per_chip``) or, where the name is older than that
rule or is a plain count, in a ``units`` map of the object or of an object enclosing
it. :func:`with_units` adds the map from :data:`FIELD_UNITS` (SI units; ``count`` for
counts of things). ``tests/test_cli_json_units.py`` runs every command and fails on
a number that says neither.

Examples
--------
>>> with_units({"time": 1e-6, "algorithm": "ring", "total_s": 2e-6})
{'time': 1e-06, 'algorithm': 'ring', 'total_s': 2e-06, 'units': {'time': 's'}}
>>> with_units([{"chips": 64}])
[{'chips': 64, 'units': {'chips': 'count'}}]
"""

import json
import math

from fabric._units import is_bool, is_float, is_int, is_real

__all__ = []

_S, _B, _BPS, _N = "s", "B", "B/s", "count"

#: Field name -> unit, for the fields whose names do not carry one.
FIELD_UNITS = {
    # cost
    "size": _B, "time": _S, "algbw": _BPS, "busbw": _BPS, "lower_bound": _S,
    # metrics
    "endpoints": _N, "switches": _N, "links": _N, "diameter": "hops",
    "bisection_links": _N, "bisection_bandwidth": _BPS, "injection_bandwidth": _BPS,
    "switch_ports": _N, "ports": _N,
    # latency, check, scaling, throughput
    "pairs": _N, "errors": _N, "warnings": _N, "chips": _N,
    "throughput_k": "1 (each pair's demand can be multiplied by k and still routed)",
    "lp_variables": _N, "lp_commodities": _N,
    # decode (DecodeStep, its layers, head and breakdown; speculative decoding)
    "batch": "sequences", "graph_batch": "sequences", "context": "tokens",
    "tokens_per_sequence": "tokens",
    "tp": "chips", "dp": "chips", "ep": "chips", "etp": "chips",
    "attention_weights": _S, "kv_cache": _S, "attention_compute": _S, "attention": _S,
    "ffn_weights": _S, "ffn_compute": _S, "ffn": _S, "dispatch": _S, "combine": _S,
    "tp_allreduce": _S, "comm": _S, "exposed_comm": _S, "launch": _S, "kernels": _N,
    "kernel_floor": _S,
    "active_experts": "experts", "active_experts_chip": "experts", "total": _S,
    "weights": _S, "compute": _S, "head": _S, "hbm_per_chip": _B,
    "draft_length": "tokens", "acceptance": "1 (probability)", "expected_tokens": "tokens",
    "draft_time": _S, "base_time": _S, "verify_time": _S, "cycle_time": _S,
    "speedup": "1 (ratio)", "speedup_bound": "1 (ratio)",
    # serve
    "isl": "tokens", "osl": "tokens", "evaluated_points": _N, "all_in_kw_per_gpu": "kW",
    "tokens_per_cycle": "tokens", "prefill_gpus": "chips", "idle_chips": "chips",
    "draft": _S, "prefill": _S, "running": "sequences", "admission_cap": "sequences",
    "step_kernels": _N,
    "weights read": _S, "KV read": _S, "launch/graph": _S, "communication": _S,
    "kernel floors": _S,
    # serve settings (the command's options)
    "fusion_factor": "1 (launches divided by it)", "overlap": "1 (fraction of communication hidden)",
    "micro_batches": _N, "moe_hbm_efficiency": "1 (fraction of peak HBM bandwidth)",
    "expert_balance": "1 (mean/max load)", "draft_cost": "1 (draft time / step time)",
    "max_batched_tokens": "tokens",
}


def _used(obj, found):
    """Add to ``found`` each FIELD_UNITS name holding a number anywhere in ``obj``."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "units":
                continue
            if is_real(v):
                if k in FIELD_UNITS:
                    found[k] = FIELD_UNITS[k]
            else:
                _used(v, found)
    elif isinstance(obj, list):
        for v in obj:
            _used(v, found)
    return found


def with_units(obj):
    """``obj`` with one ``units`` map naming the unit of each :data:`FIELD_UNITS` field in it.

    A dict gets the map at its top, covering its nested objects too (their shapes stay
    as they are); a list gets one map per element (each row of a table says its units).
    An existing ``units`` map is extended. Numbers whose names carry a unit get no entry.
    """
    if isinstance(obj, list):
        return [with_units(x) for x in obj]
    if not isinstance(obj, dict):
        return obj
    units = _used(obj, {})
    if not units:
        return obj
    return {**obj, "units": {**obj.get("units", {}), **dict(sorted(units.items()))}}


def _strict(obj):
    """``obj`` with every non-finite float replaced by None (JSON's ``null``), and numpy's
    numbers and bools as the Python ones they equal (``json`` writes no np.float32, np.int64
    or np.True_: it raised "not JSON serializable")."""
    if is_float(obj):
        obj = float(obj)
        return obj if math.isfinite(obj) else None
    if type(obj).__module__ == "numpy" and (is_int(obj) or is_bool(obj)):
        return obj.item()
    if isinstance(obj, dict):
        return {k: _strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    return obj


def to_json(obj):
    """The JSON text a command prints: :func:`with_units`, indented, and strict JSON.

    RFC 8259 has no ``NaN`` or ``Infinity`` (``json.dumps`` writes them, and strict
    parsers such as ``jq`` or JavaScript's ``JSON.parse`` refuse them), so a number
    that is not finite, such as the algorithm bandwidth of a one-rank group that
    takes no time, is written ``null``.

    >>> print(to_json({"time": 0.0, "algbw": float("inf")}))
    {
      "time": 0.0,
      "algbw": null,
      "units": {
        "algbw": "B/s",
        "time": "s"
      }
    }
    """
    return json.dumps(_strict(with_units(obj)), indent=2, allow_nan=False)
