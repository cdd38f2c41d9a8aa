"""Audit session 9: public API added or changed in session 8, bad arguments and aliases.

Each test names the fault it guards (notes/audit.md, session 9).
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
    with pytest.raises(TypeError, match="nbytes must be a number of bytes, got NoneType"):
        vllm_all_reduce_kernel(hgx, None)


@pytest.mark.parametrize("release, revision, match", [
    (None, None, "NCCL version must be a string of the form 2.21.5, got None"),
    (2.28, None, "NCCL version must be a string of the form 2.21.5, got 2.28"),
    ("2.28.7", [], "is not a revision of fabric.PREDICTION_REVISIONS"),
    ("2.28.7", ("hw_latency", ["net"], "2.28.9"), "is not a revision of fabric.PREDICTION_REVISIONS"),
])
def test_revision_holds_names_a_bad_release_or_revision(release, revision, match):
    # before: AttributeError "'NoneType' object has no attribute 'strip'" (a release that is
    # not a string) and TypeError "unhashable type: 'list'" (a revision holding a list)
    from fabric import PREDICTION_REVISIONS, SpecError, revision_holds

    rev = next(iter(PREDICTION_REVISIONS)) if revision is None else revision
    with pytest.raises(SpecError, match=match):
        revision_holds(release, rev)
