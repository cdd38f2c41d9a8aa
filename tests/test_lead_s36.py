"""Session 36's whole-diff read (lead): an engine's own all-reduce stands for the node it
describes, and a prompt pass takes its engine's collective as its decode steps do."""

import pytest

import analysis
import topologies
from analysis import trtllm_all_reduce


@pytest.fixture(scope="module")
def h200():
    return topologies.build("hgx-h200")


KW = {"batch": 1, "context": 2048, "layout": "tp=8,dp=1,etp=2", "engine": "trtllm",
      "cuda_graphs": True}


def _collective(step):
    return {p.name: p.value for p in step.parameters}["decode.collective"]


def test_another_chip_than_the_fabrics_is_not_priced_by_its_tables(h200):
    # the fabric's chip is the step's: TensorRT-LLM's measured op
    assert _collective(analysis.decode_step("deepseek-r1", h200, **KW)) == \
        "analysis.trtllm_all_reduce"
    # a fabric naming no chip, or another chip's: analysis.cost, and the step says so (it
    # said trtllm_all_reduce while the op fell back to a ring, or took B200's table)
    for spec in ("mesh:8", "hgx-b200"):
        step = analysis.decode_step("deepseek-r1", topologies.build(spec), chip="h200", **KW)
        assert _collective(step) == "analysis.cost", spec
    chip = h200.chip
    assert analysis.engine_collective("trtllm", chip, fabric=h200) is trtllm_all_reduce
    assert analysis.engine_collective("vllm", chip, fabric=topologies.build("hgx-b200")) \
        is not analysis.vllm_all_reduce
    with pytest.raises(TypeError, match="fabric must be a fabric.Fabric"):
        analysis.engine_collective("trtllm", chip, fabric="hgx-h200")


def test_a_prompt_pass_takes_its_engines_collective(h200):
    kw = {"isl": 1024, "layout": "tp=8,dp=1", "engine": "trtllm"}
    own = analysis.prefill_time("deepseek-r1", h200, **kw)
    asked = analysis.prefill_time("deepseek-r1", h200, collective=trtllm_all_reduce, **kw)
    assert own.comm == asked.comm
    nccl = analysis.prefill_time("deepseek-r1", h200, runtime="nccl", **kw)
    assert own.comm != nccl.comm


def test_engine_collectives_name_a_bad_fabric_or_collective(h200):
    for fn in (analysis.trtllm_all_reduce, analysis.vllm_all_reduce):
        with pytest.raises(TypeError, match="fabric must be a fabric.Fabric"):
            fn("hgx-h200", "all-reduce", 14336)       # was AttributeError: 'endpoints'
    with pytest.raises(TypeError, match="collective"):     # was "'int' object is not callable"
        analysis.prefill_time("deepseek-r1", h200, isl=1024, layout="tp=8", engine="trtllm",
                              collective=5)
