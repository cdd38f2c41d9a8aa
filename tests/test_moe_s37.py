"""Session 37 (moe): the report's decode settings name their runtime; one collective label;
one transport check; serving and engine arguments checked (older-b's findings)."""

import pytest

import analysis
from analysis._report_decode import report_decode_settings
from analysis._report_parts import (
    DECODE_BATCH,
    DECODE_CONTEXT,
    DECODE_MODELS,
    default_runtime,
    report_fabric,
)
from fabric import SpecError


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
    for bad in (None, 5):                  # nothing to name: not a silent 'NoneType' / 'int'
        with pytest.raises(TypeError, match=r"^collective must be a cost function") as err:
            collective_label(bad)
        assert "or None" not in str(err.value)  # the whole-diff read: None is refused here


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


def test_serving_entry_points_refuse_a_spec_str():
    # older-b's finding 8: these read fabric.chip / n_endpoints unchecked (AttributeError)
    from analysis._schedules import schedule

    calls = (lambda: analysis.serving_frontier("deepseek-v3", "hgx-h200", isl=64, osl=64),
             lambda: analysis.prefill_time("deepseek-v3", "hgx-h200", isl=64),
             lambda: analysis.closed_loop_run("deepseek-v3", "hgx-h200", input_lens=[8],
                                              output_lens=[8], concurrency=1),
             lambda: analysis.single_user_speed("deepseek-v3", "hgx-h200", isl=64, osl=64),
             lambda: analysis.moe_exchange("hgx-h200", "deepseek-v3", 8, 8, kernel="one-sided",
                                           dispatch_bytes=1, combine_bytes=2),
             lambda: schedule("all-reduce", "ring", 8, fabric="hgx-h200"))
    for call in calls:
        with pytest.raises(TypeError, match=r"^fabric must be a fabric\.Fabric .*got 'hgx-h200'"):
            call()


def test_trtllm_all_reduce_reads_a_size_text_as_cost_does():
    # older-b's finding 1: '14KiB' skipped the measured op silently (analysis.cost's nccl
    # 28.99 us on hgx-b200 where the op measures 5.76)
    from analysis._engine_allreduce import _node

    f = _node("b200")                   # the measured node, built once a process
    assert analysis.trtllm_all_reduce(f, "all-reduce", "14KiB").time == \
        analysis.trtllm_all_reduce(f, "all-reduce", 14336).time


def test_engine_collective_checks_its_engine_and_chip():
    # older-b's finding 3: a misspelt engine or a chip given by name fell to analysis.cost
    from analysis._decode import engine_collective

    assert engine_collective("trtllm", "b200").__name__ == "trtllm_all_reduce"
    with pytest.raises(SpecError, match=r"^engine must be one of sglang, trtllm, vllm or None, "
                                        r"got 'trtlm'$"):
        engine_collective("trtlm", "b200")
    with pytest.raises(SpecError, match=r"^unknown chip 'b2OO'"):
        engine_collective("trtllm", "b2OO")
    with pytest.raises(TypeError, match=r"^chip must be a chip name or a fabric\.ChipSpec"):
        engine_collective("trtllm", 5)


def test_trtllm_all_reduce_chips_and_nodes_are_one_list():
    # older-b's finding 12 (a pin): a chip added to the measured table without its node would
    # make every trtllm step on it a bare KeyError in _node
    from analysis._engine_allreduce import TRTLLM_ALLREDUCE_CHIPS, TRTLLM_ALLREDUCE_NODES, _node

    assert set(TRTLLM_ALLREDUCE_NODES) == TRTLLM_ALLREDUCE_CHIPS
    assert all(_node(chip).chip.name == chip for chip in TRTLLM_ALLREDUCE_CHIPS)


def test_a_step_lists_the_measured_all_reduce_points_it_read():
    # older-b's finding 16: decode_step's parameters named the collective function but none of
    # TensorRT-LLM's measured points, while the MLA, GEMM and MoE-module tables list theirs
    f = report_fabric("nvl72")          # b200: engine='trtllm' takes the measured op
    kw = {"batch": DECODE_BATCH, "context": DECODE_CONTEXT, "layout": "tp=8",
          "ep_kernel": "one-sided"}
    step = analysis.decode_step(DECODE_MODELS[0], f, **kw)
    points = [p for p in step.parameters if p.name.startswith("decode.trtllm_allreduce.")]
    assert [p.name for p in points] == ["decode.trtllm_allreduce.b200.tp8.e4096",
                                        "decode.trtllm_allreduce.b200.tp8.e8192"]
    assert all(p.unit == "s" and "custom_allreduce_perf" in p.source for p in points)
    asked = analysis.decode_step(DECODE_MODELS[0], f, runtime="nccl", **kw)
    assert not any(p.name.startswith("decode.trtllm_allreduce.") for p in asked.parameters)


def test_measured_tables_read_their_chip_by_one_rule():
    # older-b's finding 10: three rules: a misspelt name read silently as 'nothing measured'
    # (the step then fell back to its roofline), a ChipSpec refused or read as nothing
    import dataclasses

    from analysis._engine_allreduce import trtllm_all_reduce_time
    from analysis._gemm import grouped_gemm_rate, moe_module_time
    from analysis._gemm_measured import trtllm_gemm_time
    from analysis._mla_measured import mla_context_time, mla_generation_time
    from fabric import chip_spec

    readers = (lambda c: grouped_gemm_rate(c, "fp4", 96),
               lambda c: moe_module_time(c, "fp4", (7168, 2048, 256, 8), 1, 8, 64),
               lambda c: trtllm_gemm_time(c, "bf16", 512, 7168, 16384),
               lambda c: mla_context_time(c, 128, 512, 64, 2, 1024),
               lambda c: mla_generation_time(c, 128, 512, 64, 2, 8, 1024),
               lambda c: trtllm_all_reduce_time(c, 8, 14336))
    b200 = chip_spec("b200")
    mine = dataclasses.replace(b200, name="mine")     # a user's own chip: nothing measured
    for read in readers:
        assert read(b200) == read("b200") and read(mine) is None
        with pytest.raises(SpecError, match=r"^unknown chip 'b2OO'"):
            read("b2OO")
    assert trtllm_all_reduce_time(b200, 8, 14336) is not None


def test_in_switch_planes_and_pareto_front_check_their_arguments():
    # inputs' probe (lead 23:36): a spec str / a number reached .graph or a loop unchecked
    from analysis._schedules import in_switch_planes
    from analysis._serving import pareto_front

    f = report_fabric("hgx-h200")
    with pytest.raises(TypeError, match=r"^fabric must be a fabric\.Fabric .*got 'hgx-h200'"):
        in_switch_planes("hgx-h200", f.endpoints)
    for bad in (5, None, "chip0"):
        with pytest.raises(TypeError, match=r"^nodes must be a sequence of chips"):
            in_switch_planes(f, bad)
    for bad in (5, None, {"x": 1, "y": 2}):
        with pytest.raises(TypeError, match=r"^points must be a sequence of serving points"):
            pareto_front(bad, "x", "y")
    assert pareto_front(iter([{"x": 1, "y": 2}]), "x", "y") == [{"x": 1, "y": 2}]


def test_a_step_lists_no_measured_point_where_its_all_reduce_fell_back():
    # the session's whole-diff read: trtllm_all_reduce prices a TP group across two servers
    # (no load/store domain holds it) by analysis.cost, but the step's parameter table still
    # listed the measured op's points as the figures it used
    import topologies

    kw = {"batch": DECODE_BATCH, "context": DECODE_CONTEXT, "layout": "tp=8",
          "ep_kernel": "deepep-low-latency"}
    split = analysis.decode_step(DECODE_MODELS[0],
                                 topologies.build("rail:servers=2,gpus=4,chip=b200"), **kw)
    assert not any(p.name.startswith("decode.trtllm_allreduce.") for p in split.parameters)
    assert any(p.name == "decode.collective" and p.value == "analysis.trtllm_all_reduce"
               for p in split.parameters)
