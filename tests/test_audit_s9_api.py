"""Audit session 9: public API added or changed in session 8, bad arguments and aliases.

Each test names the fault it guards.
"""

import pytest

import topologies
from analysis import cost, vllm_all_reduce, vllm_all_reduce_kernel


@pytest.fixture(scope="module")
def hgx():
    return topologies.build("hgx-h200")


@pytest.mark.parametrize("name", ["allreduce", "AllReduce", "ALL-REDUCE", " all-reduce "])
def test_vllm_all_reduce_reads_every_name_cost_reads_as_all_reduce(hgx, name):
    # section 1: an alias analysis.cost reads as all-reduce went to NCCL (21.4 us) instead of
    # vLLM's kernel for the size (FlashInfer one-shot, 10.8 us at 1 MiB over 4 H200s)
    ranks = list(hgx.endpoints[:4])
    assert cost(hgx, name, 1 << 20).op == "all-reduce"
    want = vllm_all_reduce(hgx, "all-reduce", 1 << 20, ranks=ranks)
    got = vllm_all_reduce(hgx, name, 1 << 20, ranks=ranks)
    assert (got.runtime, got.algorithm, got.time) == (want.runtime, want.algorithm, want.time)
    assert want.runtime != "nccl"


@pytest.mark.parametrize("ranks, error, match", [
    ("chip0", TypeError, "ranks must be a sequence of ranks or chip names, got 'chip0'"),
    (4, TypeError, "ranks must be a sequence of ranks or chip names, got 4"),
    ([], Exception, "at least one rank"),
    ([0, 0], Exception, "ranks lists 'chip0' twice"),
])
def test_vllm_all_reduce_reads_ranks_as_cost_does(hgx, ranks, error, match):
    # section 1: a string was read char by char ("no node called 'c'"), a number said
    # "'int' object is not iterable"
    for call in (lambda: vllm_all_reduce_kernel(hgx, 1 << 20, ranks),
                 lambda: vllm_all_reduce(hgx, "all-reduce", 1 << 20, ranks=ranks)):
        with pytest.raises(error, match=match):
            call()


def test_vllm_all_reduce_names_a_size_that_is_none(hgx):
    with pytest.raises(TypeError,
                       match=r"^nbytes must be a finite number > 0 bytes, got nbytes=None "
                             r"\(a NoneType\)$"):         # check_number's (session 38)
        vllm_all_reduce_kernel(hgx, None)


@pytest.mark.parametrize("release, revision, error, match", [
    # a release of the wrong kind is a TypeError (STYLE's rule; SpecError until session 32)
    (None, None, TypeError, "NCCL version must be a string of the form 2.21.5, got None"),
    (2.28, None, TypeError, "NCCL version must be a string of the form 2.21.5, got 2.28"),
    ("2.28.7", [], "spec", "is not a revision of fabric.PREDICTION_REVISIONS"),
    ("2.28.7", ("hw_latency", ["net"], "2.28.9"), "spec",
     "is not a revision of fabric.PREDICTION_REVISIONS"),
])
def test_revision_holds_names_a_bad_release_or_revision(release, revision, error, match):
    # before: AttributeError "'NoneType' object has no attribute 'strip'" (a release that is
    # not a string) and TypeError "unhashable type: 'list'" (a revision holding a list)
    from fabric import PREDICTION_REVISIONS, SpecError, revision_holds

    rev = next(iter(PREDICTION_REVISIONS)) if revision is None else revision
    with pytest.raises(SpecError if error == "spec" else error, match=match):
        revision_holds(release, rev)


_ROUTED = ["switch:4,planes=2", "torus:3x3", "fattree:k=4", "dragonfly:h=1", "mesh:2x2"]


@pytest.mark.parametrize("spec", _ROUTED)
@pytest.mark.parametrize("method", ["hops", "latency", "reachable", "measure", "bottleneck"])
def test_router_refuses_a_two_dimensional_query_by_its_shape(spec, method):
    # before: numpy broadcast errors, an IndexError, and on an intact dragonfly reachable
    # answered 2 values for 4 pairs (np.ones(len(src)))
    import numpy as np

    for f in (topologies.build(spec), topologies.build(spec).without(
            links=[min(topologies.build(spec).graph.edges)])):
        with pytest.raises(ValueError, match=r"src must be a node index or a one-dimensional "
                                             r"sequence of them, got an array of shape \(2, 2\)"):
            getattr(f.router, method)(np.array([[0, 1], [1, 0]]), np.array([[1, 2], [2, 1]]))


@pytest.mark.parametrize("spec", _ROUTED)
def test_router_answers_an_empty_query_given_as_a_list(spec):
    # before: TypeError "src must be node indices (integers), got dtype float64" for []
    f = topologies.build(spec)
    assert f.router.reachable([], []).shape == (0,)
    assert f.router.hops([], []).shape == (0,)


def test_a_custom_allreduce_across_domains_names_its_runtime():
    from analysis import NotApplicableError
    from fabric import VLLM_CUSTOM_ALLREDUCE

    rail = topologies.build("rail:servers=2,gpus=4,chip=h100")
    with pytest.raises(NotApplicableError, match=f"the {VLLM_CUSTOM_ALLREDUCE.name} runtime "
                                                 "works by loads and stores"):
        cost(rail, "all-reduce", 1 << 20, runtime=VLLM_CUSTOM_ALLREDUCE)
