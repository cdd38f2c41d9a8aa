"""TensorRT-LLM's own all-reduce op at its measured time (session 36, moe):
``analysis.trtllm_all_reduce`` / ``trtllm_all_reduce_time`` read
``analysis.TRTLLM_ALLREDUCE_BF16`` (aiconfigurator's TensorRT-LLM 1.2.0rc5 sweep on one B200
and one H200 node), the batch-1 held-out rows' ``collective=``."""

import pytest

import analysis
import topologies
from analysis import TRTLLM_ALLREDUCE_BF16, trtllm_all_reduce, trtllm_all_reduce_time
from analysis._decode import collective_holds_starts


@pytest.fixture(scope="module")
def b200():
    return topologies.build("hgx-b200")


def test_the_table_is_the_collectors_sweep():
    # every (chip, GPUs) sweep from 128 elements doubling to 512 Mi; a few values as read from
    # the parquet blobs (b200 7c04325, h200 e45e6df), milliseconds
    for (chip, ranks), pts in TRTLLM_ALLREDUCE_BF16.items():
        assert chip in ("b200", "h200") and ranks in (2, 4, 8)
        assert [n for n, _ in pts] == [128 << i for i in range(23)]
    b, h = dict(TRTLLM_ALLREDUCE_BF16[("b200", 8)]), dict(TRTLLM_ALLREDUCE_BF16[("h200", 8)])
    assert (b[4096], b[8192], b[16384]) == (0.0057296, 0.00599616, 0.0057696)
    assert (h[4096], h[8192]) == (0.00386016, 0.00391584)


def test_time_is_the_lower_envelope_in_bytes():
    # at a stored size its envelope value; two bytes an element
    assert trtllm_all_reduce_time("b200", 8, 2 * 4096) == pytest.approx(5.7296e-6)
    # 8192 elements (6.00 us) takes 16384's 5.77: a smaller message is never dearer
    assert trtllm_all_reduce_time("b200", 8, 2 * 8192) == pytest.approx(5.7696e-6)
    # the rows' 7168 elements: linear between 4096 and 8192
    assert trtllm_all_reduce_time("b200", 8, 14336) == pytest.approx(
        5.7296e-6 + (5.7696e-6 - 5.7296e-6) * 3 / 4)
    # H200 2 GPUs: an isolated high (8.82 us at 8192) reads as the next size's 3.42
    assert trtllm_all_reduce_time("h200", 2, 2 * 8192) == pytest.approx(3.42048e-6)
    # H200 4 GPUs from 32768 elements: a step every larger size keeps stays
    assert trtllm_all_reduce_time("h200", 4, 2 * 32768) > 9e-6
    # nothing measured: another chip, group size, or outside the sweep
    for args in (("gb200", 8, 14336), ("b200", 3, 14336), ("b200", 8, 100),
                 ("b200", 8, 2 << 30)):
        assert trtllm_all_reduce_time(*args) is None, args


def test_the_collective_takes_the_measured_op(b200):
    ranks = list(b200.endpoints)
    r = trtllm_all_reduce(b200, "all-reduce", 14336, ranks=ranks)
    own = analysis.cost(b200, "all-reduce", 14336, ranks=ranks, runtime="symmetric-memory")
    assert r.algorithm == "trtllm measured"
    # on the node it was measured on: the op itself
    assert r.time == pytest.approx(trtllm_all_reduce_time("b200", 8, 14336), rel=1e-12)
    assert r.time > own.time
    assert r.algbw == pytest.approx(14336 / r.time)
    # other operations, and chips not measured: analysis.cost at its default runtime
    a2a = trtllm_all_reduce(b200, "all-to-all", 14336, ranks=ranks)
    assert a2a.time == analysis.cost(b200, "all-to-all", 14336, ranks=ranks).time
    gb = topologies.build("gb200-nvl72")
    group = list(gb.endpoints)[:8]
    assert trtllm_all_reduce(gb, "all-reduce", 14336, ranks=group).time == analysis.cost(
        gb, "all-reduce", 14336, ranks=group).time
    assert collective_holds_starts(trtllm_all_reduce)
    # the engine's default where the op was measured, unless a runtime is asked
    from fabric import chip_spec
    assert analysis.engine_collective("trtllm", chip_spec("b200")) is trtllm_all_reduce
    assert analysis.engine_collective("trtllm", chip_spec("b200"), runtime="nccl") \
        is not trtllm_all_reduce


def test_another_or_degraded_fabric_carries_its_difference(b200):
    # a failed link that slows the group slows the op by as much (never free)
    f = b200.without(links=[min(b200.graph.edges())])
    ranks = list(f.endpoints)
    for nbytes in (14336, 1 << 24):
        r = trtllm_all_reduce(f, "all-reduce", nbytes, ranks=ranks)
        own = analysis.cost(f, "all-reduce", nbytes, ranks=ranks, runtime="symmetric-memory")
        node = analysis.cost(b200, "all-reduce", nbytes, ranks=list(b200.endpoints),
                             runtime="symmetric-memory")
        assert own.time > node.time
        assert r.time == pytest.approx(
            trtllm_all_reduce_time("b200", 8, nbytes) + own.time - node.time, rel=1e-12)
    # a group across two servers is not the node's op: analysis.cost as before
    rail = topologies.build("rail:servers=2,gpus=4,chip=b200")
    group = list(rail.endpoints)
    assert trtllm_all_reduce(rail, "all-reduce", 14336, ranks=group).time == analysis.cost(
        rail, "all-reduce", 14336, ranks=group).time


def test_a_step_prices_each_tp_all_reduce_at_the_op(b200):
    # batch 1, attention TP8, experts TP2 x EP4 (the rows' layout): each layer's two all-reduces
    # (attention output, MoE output) at the measured op, their kernels' starts held
    kw = {"batch": 1, "context": 2048, "layout": "tp=8,dp=1,etp=2", "engine": "trtllm",
          "cuda_graphs": True}
    step = analysis.decode_step("deepseek-r1-nvfp4", b200, collective=trtllm_all_reduce, **kw)
    t = trtllm_all_reduce_time("b200", 8, 7168 * 2)
    assert all(layer.tp_allreduce == pytest.approx(2 * t) for layer in step.layers)
    base = analysis.decode_step("deepseek-r1-nvfp4", b200, runtime="symmetric-memory", **kw)
    assert [la.launch for la in step.layers] == [la.launch for la in base.layers]
    assert ("decode.collective", "analysis.trtllm_all_reduce") in {
        (p.name, p.value) for p in step.parameters}


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="ranks must be an integer"):
        trtllm_all_reduce_time("b200", True, 14336)
    with pytest.raises(TypeError, match="chip must be a chip name or a fabric.ChipSpec"):
        trtllm_all_reduce_time(5, 8, 14336)
    with pytest.raises(ValueError, match="nbytes"):
        trtllm_all_reduce_time("b200", 8, -1)
