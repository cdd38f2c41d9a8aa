"""Session 38 (moe): the engines' all-reduce texts name their chips from the tables that
hold them (the session-37 whole-diff read's F13); the collective algorithm a step is given
is read once (inputs' probe)."""

import pytest

import analysis
import topologies
from analysis import NotApplicableError
from analysis._engine_allreduce import (
    ENGINE_ALL_REDUCES,
    TRTLLM_ALLREDUCE_CHIPS,
    VLLM_SM_VERSIONS,
    trtllm_all_reduce,
    vllm_all_reduce,
)
from fabric import CHIPS, SpecError


def test_vllm_generations_are_one_table_for_the_rule_and_its_text():
    # the rule engine_collective applies and the source text a step lists read one table
    # (they were a tuple in _decode and a dict here, and the text spelled both by hand)
    for name, spec in CHIPS.items():
        picked = analysis.engine_collective("vllm", name) is analysis.vllm_all_reduce
        assert picked == (spec.generation in VLLM_SM_VERSIONS), name
    text = ENGINE_ALL_REDUCES["analysis.vllm_all_reduce"].source
    for gen, sm in VLLM_SM_VERSIONS.items():
        assert gen.capitalize() in text and f"SM{sm}" in text


def test_trtllm_source_names_each_measured_chip_and_its_folder():
    text = ENGINE_ALL_REDUCES["analysis.trtllm_all_reduce"].source
    for chip in TRTLLM_ALLREDUCE_CHIPS:
        assert f"{chip}_sxm" in text and chip.upper() in text


# -- the collective algorithm a step is given: read once (inputs' probe, session 38) -------


def _h200():
    return topologies.build("hgx-h200")


def test_an_algorithm_mapping_names_operations_as_the_step_looks_them_up():
    # {'AllReduce': 'Tree'} was silently ignored: a step looks its all-reduce up as
    # 'all-reduce' (hgx-h200 1 MiB over 8: auto's 28.0 us on the parent, the tree's 46.3)
    from analysis._decode import collective_seconds

    f = _h200()
    alias = collective_seconds(f, "all-reduce", 1 << 20, range(8), algorithm={"AllReduce": "Tree"})
    canon = collective_seconds(f, "all-reduce", 1 << 20, range(8), algorithm="tree")
    assert alias == canon != collective_seconds(f, "all-reduce", 1 << 20, range(8))


@pytest.mark.parametrize("algorithm, error", [
    ({"a": "ring"}, SpecError), ({"all-reduce": 5}, TypeError),
    ({"all-reduce": "ring", "AllReduce": "tree"}, SpecError), ({"all-reduce": "nope"}, SpecError),
    ({"all-to-all": "ring"}, NotApplicableError)])
def test_a_wrong_algorithm_mapping_is_refused(algorithm, error):
    # a mapping's all-reduce is never read where the step prices no TP all-reduce (the
    # default layout on hgx-h200), and its keys were never read as operations
    with pytest.raises(error):
        analysis.decode_step("deepseek-v3", _h200(), batch=8, context=1024,
                             algorithm=algorithm)


def test_engine_collective_reads_the_runtime_and_algorithm_it_is_given():
    with pytest.raises(SpecError, match="unknown runtime 'ncl'"):
        analysis.engine_collective("trtllm", "h200", runtime="ncl")
    with pytest.raises(TypeError):
        analysis.engine_collective("trtllm", "h200", runtime=5)
    with pytest.raises(TypeError):
        analysis.engine_collective("vllm", "h200", algorithm={"ring"})
    with pytest.raises(SpecError, match="unknown algorithm 'nope'; known: auto, binomial"):
        analysis.engine_collective("trtllm", "b200", algorithm="nope")
    # 'AUTO' is cost's 'auto': the engine's own dispatch, as for 'auto'
    assert analysis.engine_collective("vllm", "h200", algorithm="AUTO") is vllm_all_reduce


@pytest.mark.parametrize("fn", [trtllm_all_reduce, vllm_all_reduce])
def test_engine_all_reduces_refuse_a_wrong_algorithm_as_cost_does(fn):
    with pytest.raises(TypeError, match="algorithm must be a str"):
        fn(_h200(), "all-reduce", 1 << 14, algorithm=None)


def test_a_step_reads_its_algorithm_once(monkeypatch):
    # the whole-diff read's W-4: the settings, engine_collective and every collective_seconds
    # call read the same mapping again (5 readings of its key here); now the settings read it
    # and the functions it is passed down to take it as read
    from analysis import _decode

    calls = []
    real = _decode.normalize_op
    monkeypatch.setattr(_decode, "normalize_op", lambda op: calls.append(op) or real(op))
    analysis.decode_step("deepseek-v3", _h200(), batch=8, context=1024, layout="tp=8",
                         algorithm={"all-reduce": "ring"}, parameters=False)
    assert calls == ["all-reduce"]


@pytest.mark.parametrize("layout", ["tp=8", "tp=1"])
@pytest.mark.parametrize("runtime", [5, set(), float("nan")])
def test_a_step_refuses_a_runtime_of_the_wrong_kind(layout, runtime):
    # review S38-R1: reading the algorithm once (W-4) skipped engine_collective's runtime
    # check, so a wrong kind reached cost as "takes no runtime=" (a FabricError)
    f = topologies.build("hgx-b200")
    with pytest.raises(TypeError, match="^runtime must be a name such as 'nccl'"):
        analysis.decode_step("deepseek-v3", f, batch=8, context=1024, layout=layout,
                             runtime=runtime)
