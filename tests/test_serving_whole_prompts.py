"""TensorRT-LLM runs a prompt only whole (chunked prefill off, its LLM-API default): a serving
point whose prompt cannot run beside its rank's other requests within ``max_num_tokens`` is
refused, and the frontier leaves such points out with the reason (lead, session 17).

TensorRT-LLM's MicroBatchScheduler (``cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp``,
``operator()``) walks the active requests in order: a generating request takes one token plus
its draft tokens, a context request without chunking its whole prompt, and the walk stops at
the first request that would pass ``max_num_tokens``. vLLM V1 always chunks a prompt into what a
step leaves (``analysis.VLLM_MAX_BATCHED_TOKENS``): the same point is priced there.
"""

import pytest

import analysis
import topologies
from fabric import SpecError

B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
KW = {"isl": 1024, "osl": 64, "batch": 8, "layout": "tp=8"}


@pytest.fixture(scope="module")
def node():
    return topologies.build(B200_8)


def test_a_prompt_that_cannot_run_whole_is_refused_with_the_ways_out(node):
    # 7 other requests a rank take 7 tokens: 1030 - 7 = 1023 < 1024 prompt tokens
    with pytest.raises(SpecError) as e:
        analysis.serving_point("kimi-k2", node, engine="trtllm", max_batched_tokens=1030, **KW)
    msg = str(e.value)
    for part in ("isl=1024", "max_num_tokens=1030", "8 per rank", "whole",
                 "max_batched_tokens >= 1031", "engine='vllm'"):
        assert part in msg, (part, msg)


def test_the_boundary_and_the_engines_that_chunk_or_do_not_mix(node):
    ok = analysis.serving_point("kimi-k2", node, engine="trtllm", max_batched_tokens=1031, **KW)
    assert ok.fits
    # vLLM chunks the prompt into what the step leaves: priced, as before
    analysis.serving_point("kimi-k2", node, engine="vllm", max_batched_tokens=1030, **KW)
    # disaggregated: the decode GPUs run no prompt
    analysis.serving_point("kimi-k2", node, engine="trtllm", max_batched_tokens=1030,
                           mode="disaggregated", **KW)


def test_draft_tokens_take_their_share_of_the_budget(node):
    # with one draft token each of the 7 other requests takes 2 tokens: 1037 - 14 = 1023
    kw = dict(KW, engine="trtllm", draft_length=1, draft_cost=0.1)
    with pytest.raises(SpecError, match="whole"):
        analysis.serving_point("kimi-k2", node, max_batched_tokens=1037, **kw)
    analysis.serving_point("kimi-k2", node, max_batched_tokens=1038, **kw)


def test_the_frontier_leaves_out_the_points_whose_prompt_cannot_run_whole(node):
    kw = {"isl": 1024, "osl": 64, "layouts": ("tp=8",), "engine": "trtllm",
          "speculative": ((0, 0.0),), "keep_all": True}
    fr = analysis.serving_frontier("kimi-k2", node, batches=[1, 8, 16],
                                   max_batched_tokens=1031, **kw)
    assert sorted(p.batch for p in fr.all_points) == [1, 8]
    assert any("16" in s and "whole" in s for s in fr.skipped), fr.skipped
    # a budget below the prompt itself runs no batch at all: one clear error
    with pytest.raises(SpecError, match="whole"):
        analysis.serving_frontier("kimi-k2", node, batches=[1, 8], max_batched_tokens=1000,
                                  **kw)
