"""Session 37 (moe): the report's decode settings name their runtime; one collective label."""

import analysis
from analysis._report_decode import report_decode_settings
from analysis._report_parts import (
    DECODE_BATCH,
    DECODE_CONTEXT,
    DECODE_MODELS,
    default_runtime,
    report_fabric,
)


def _used(step, name):
    return next(p.value for p in step.parameters if p.name == name)


def test_report_settings_price_collectives_under_the_runtime_the_report_states():
    # every report caption states analysis.cost's default runtime; on a B200 system
    # decode_step's engine default (TensorRT-LLM) would price its TP all-reduces by
    # TensorRT-LLM's measured op instead (nvl72 kimi-k2 tp=8: 8.25 ms, not 9.69)
    f = report_fabric("nvl72")
    kw = {"batch": DECODE_BATCH, "context": DECODE_CONTEXT, "layout": "tp=8"}
    step = analysis.decode_step(DECODE_MODELS[0], f, **kw, **report_decode_settings(f))
    assert _used(step, "decode.collective") == "analysis.cost"
    assert _used(step, "decode.runtime") == default_runtime()
    stated = analysis.decode_step(DECODE_MODELS[0], f, **kw, ep_kernel="one-sided",
                                  runtime=default_runtime())
    assert step.time == stated.time

