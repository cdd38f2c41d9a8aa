"""TensorRT-LLM's MLA generation on Hopper runs FlashMLA as three kernels per attention layer:
the tile scheduler (``get_mla_metadata``, relaunched in every layer until TensorRT-LLM PR
#12161), the split-KV kernel and its combine kernel (:data:`analysis._decode.
TRTLLM_HOPPER_FLASHMLA`). The reference counts them independently: the step without the two
extra kernels (the table emptied) plus one replayed-graph kernel boundary for each of them in
every attention layer of the step, the MTP layer of a draft step included; nothing else of the
step moves."""

from unittest import mock

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D
from fabric import SpecError

BOUNDARY = analysis.GRAPH_KERNEL_OVERHEAD.value
GAP = analysis.PDL_HIDDEN_GAP.value


def _without_flashmla_kernels():
    return mock.patch.dict(D.TRTLLM_HOPPER_FLASHMLA, clear=True)


@pytest.mark.parametrize("chip", ["h100", "h200", "h800", "h20"])
@pytest.mark.parametrize("model", ["deepseek-r1", "kimi-k2", "deepseek-v3"])
def test_hopper_trtllm_mla_layer_runs_flashmlas_three_kernels(chip, model):
    for tp in (1, 8):
        mla = analysis.step_kernel_lists(model, chip, engine="trtllm", tp=tp)["mla"]
        with _without_flashmla_kernels():
            plain = analysis.step_kernel_lists(model, chip, engine="trtllm", tp=tp)["mla"]
        at = plain.index("gen_attention")
        assert mla == (*plain[:at], "mla_metadata", "gen_attention", "mla_combine",
                       *plain[at + 1:])
        assert D.KERNEL_CLASSES["mla_metadata"] == D.KERNEL_CLASSES["mla_combine"] == "other"


@pytest.mark.parametrize("model,chip,engine,graphs", [
    ("deepseek-r1", "b200", "trtllm", True),            # Blackwell: trtllm-gen, not FlashMLA
    ("deepseek-r1-nvfp4", "b200", "trtllm", True),
    ("deepseek-r1", "h200", "vllm", True),              # other engines: their own lists
    ("deepseek-r1", "h200", "sglang", True),
    ("deepseek-r1", "h200", "trtllm", False),           # eager: one kernel per operator
    ("deepseek-v3.2", "h200", "trtllm", True),          # DSA: another attention kernel
    ("glm-5", "h200", "trtllm", True),
])
def test_no_flashmla_kernels_elsewhere(model, chip, engine, graphs):
    lists = analysis.step_kernel_lists(model, chip, engine=engine, cuda_graphs=graphs, tp=8)
    with _without_flashmla_kernels():
        assert lists == analysis.step_kernel_lists(model, chip, engine=engine,
                                                   cuda_graphs=graphs, tp=8)
    assert not any(n in ("mla_metadata", "mla_combine") for v in lists.values() for n in v)


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(["deepseek-r1", "kimi-k2", "deepseek-r1-nvfp4", "deepseek-v3.2"]),
       system=st.sampled_from(["hgx-h200", "switch:9,chip=h200", "hgx-h20", "hgx-b200"]),
       layout=st.sampled_from(["tp=8", "tp=1,dp=8", "tp=8,dp=1,etp=2", "tp=2,dp=4"]),
       batch=st.integers(1, 128), context=st.integers(1, 8192), q=st.integers(1, 4),
       draft=st.booleans(), pdl=st.booleans(),
       runtime=st.sampled_from(["nccl", "symmetric-memory"]), failed=st.booleans())
def test_each_hopper_mla_layer_pays_two_more_boundaries(model, system, layout, batch, context,
                                                        q, draft, pdl, runtime, failed):
    f = topologies.build(system)
    if system.startswith("switch:9"):           # a spare chip: a failed one is replaced
        f = f.without(chips=["chip3" if failed else "chip8"])
    m = analysis.model_config(model)
    draft = draft and m.mtp_modules > 0
    kw = {"batch": batch, "context": context, "layout": layout, "tokens_per_sequence": q,
          "engine": "trtllm", "draft": draft, "pdl": pdl, "runtime": runtime}
    try:
        on = analysis.decode_step(model, f, **kw)
    except SpecError:                           # does not fit: nothing to compare
        assume(False)
    with _without_flashmla_kernels():
        off = analysis.decode_step(model, f, **kw)
    flash = (f.chip.generation == "hopper" and m.attention.kind == "mla"
             and not m.attention.sparse)
    # where the step takes TensorRT-LLM's measured MLA generation op (128 heads a GPU, one token
    # a sequence; H200 with a BF16 KV cache since session 21, B200/GB200 with a BF16 or, since
    # session 22, an FP8 one; since session 24 also 16 heads a GPU, and a q > 1 step takes the
    # one-token op as its floor; since session 25 64 and 32 heads too) the op's time holds
    # FlashMLA's two kernels: they add no boundary (tests/test_decode_mla_measured.py,
    # tests/test_models_s24_mla_heads.py, tests/test_models_s25_mla_heads.py)
    measured = any(p.name.startswith("decode.mla_generation_time") for p in on.parameters)
    assert not measured or (f.chip.name in ("h200", "b200")
                            and m.attention.heads / on.layout.tp in (128, 64, 32, 16))
    extra = 2 * (BOUNDARY - (GAP if pdl else 0.0)) if flash and not measured else 0.0
    assert len(on.layers) == len(off.layers)
    for a, b in zip(on.layers, off.layers, strict=True):
        assert a.kernels == b.kernels + (2 if flash else 0)
        assert a.launch == pytest.approx(b.launch + extra, rel=1e-12, abs=1e-15)
    assert on.time == pytest.approx(off.time + len(on.layers) * extra, rel=1e-12, abs=1e-15)
    for part in ("attention", "ffn", "head", "exposed_comm", "kernel_floor", "weights",
                 "kv_cache", "compute"):
        assert getattr(on.breakdown, part) == pytest.approx(getattr(off.breakdown, part),
                                                            rel=1e-12, abs=1e-15)


def test_the_h200_rows_step_by_hand():
    """r1-h200 max-throughput's step (deepseek-r1, 8x H200, tp=1,dp=8, 128 sequences a rank
    at 2048 tokens): 61 attention layers x 2 kernels x 1.3 us = 158.6 us more than without,
    priced at FlashMLA's rates; with TensorRT-LLM's MLA generation op at its measured H200
    time (session 21, which holds FlashMLA's metadata and combine) the two add nothing."""
    f = topologies.build("hgx-h200")
    kw = {"batch": 1024, "context": 2048, "layout": "tp=1,dp=8", "engine": "trtllm"}
    no_op = mock.patch.object(D._Settings, "mla_measured", new=property(lambda s: None))
    with no_op:
        on = analysis.decode_step("deepseek-r1", f, **kw)
        with _without_flashmla_kernels():
            off = analysis.decode_step("deepseek-r1", f, **kw)
    assert on.time - off.time == pytest.approx(61 * 2 * 1.3e-6, rel=1e-9)
    on = analysis.decode_step("deepseek-r1", f, **kw)
    with _without_flashmla_kernels():
        off = analysis.decode_step("deepseek-r1", f, **kw)
    assert on.time == pytest.approx(off.time, rel=1e-12)
