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


def test_one_collective_label_for_the_step_and_the_cli():
    # serve's header named the collective by re-deriving decode_step's label, and the
    # engines' own all-reduces were listed in five places (older-b's finding 7): one table
    from analysis._cli_decode import runtime_text
    from analysis._decode import (
        collective_holds_starts,
        collective_label,
        engine_collective,
        fabric_chip,
    )
    from analysis._engine_allreduce import ENGINE_ALL_REDUCES

    f = report_fabric("hgx-h200")
    assert [collective_label(engine_collective(e, fabric_chip(f), fabric=f))
            for e in ("trtllm", "vllm", "sglang")] == \
        ["analysis.trtllm_all_reduce", "analysis.vllm_all_reduce", "analysis.cost"]
    for label, e in ENGINE_ALL_REDUCES.items():
        assert collective_label(e.function) == label and collective_holds_starts(e.function)
        assert e.phrase in runtime_text(label)
    assert collective_label(analysis.cost) == "cost"      # a caller's function: its name


def test_a_callers_function_of_an_engine_ops_name_is_not_taken_for_it():
    # the label was read off __name__: a caller's own function called trtllm_all_reduce
    # was recorded as TensorRT-LLM's measured op with that op's source
    from analysis._decode import _collective_parameter

    def trtllm_all_reduce(*args, **kw):
        return analysis.cost(*args, **kw)

    p = _collective_parameter(trtllm_all_reduce)
    assert (p.value, p.source) == ("trtllm_all_reduce", "user")


def test_one_transport_check_for_cost_decode_step_and_the_exchange():
    # decode_step and moe_exchange each wrote 'transport must be loadstore, rdma or None'
    # while cost took 'native' (and 'auto' or ' NATIVE ', any case): one check, one message
    import pytest

    from fabric import SpecError

    f = report_fabric("nvl72")           # the first test's step (its caches are warm)
    kw = {"batch": DECODE_BATCH, "context": DECODE_CONTEXT, "layout": "tp=8",
          "runtime": "nccl", "ep_kernel": "one-sided"}
    assert analysis.decode_step(DECODE_MODELS[0], f, transport="native", **kw).time == \
        analysis.decode_step(DECODE_MODELS[0], f, transport=None, **kw).time
    ex = {"kernel": "deepep-low-latency", "dispatch_bytes": 1, "combine_bytes": 2}
    assert analysis.moe_exchange(f, "deepseek-v3", 8, 8, transport="native", **ex) == \
        analysis.moe_exchange(f, "deepseek-v3", 8, 8, **ex)
    calls = (lambda t: analysis.cost(f, "all-reduce", 1024, transport=t),
             lambda t: analysis.decode_step(DECODE_MODELS[0], f, transport=t, **kw),
             lambda t: analysis.moe_exchange(f, "deepseek-v3", 8, 8, transport=t, **ex))
    for call in calls:
        for bad in ("pigeon", "auto", " NATIVE "):
            with pytest.raises(SpecError, match=r"^unknown transport '.*'; known: loadstore, "
                                                r"rdma, or native \(each step its own, the "
                                                r"default\)$"):
                call(bad)
        with pytest.raises(TypeError, match=r"^transport must be a str, got 5 \(an int\)$"):
            call(5)
