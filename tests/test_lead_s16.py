"""Session 16 (lead): two findings of audit and report in the serving module.

- ``prefill_time`` hands its ``**cost_kwargs`` to the pass's collectives; a keyword they do
  not take (``ep_kernel``, which decode has and prefill does not) raised a TypeError naming
  ``collective_seconds``, an internal function, instead of the call the user made.
- ``speed_limits``' compute share is what the local parts hold beyond their reads and
  floors; where those are equal the float residue of the subtractions (4e-19 s) showed as a
  compute share ('compute 4.337e-10ns' in ``cofabric serve``).
"""
import math

import pytest

import analysis
import topologies


@pytest.fixture(scope="module")
def b200x8():
    return topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")


@pytest.mark.parametrize("key", ["skew", "bogus"])
def test_prefill_time_names_itself_and_the_keyword_it_does_not_take(b200x8, key):
    with pytest.raises(TypeError) as e:
        analysis.prefill_time("kimi-k2", b200x8, isl=1024, layout="tp=8", **{key: 1})
    msg = str(e.value)
    assert msg.startswith("prefill_time() got an unexpected keyword argument")
    assert repr(key) in msg and "collective_seconds" not in msg
    for taken in ("algorithm", "collective", "runtime", "transport"):
        assert taken in msg


def test_prefill_time_still_takes_the_collectives_keywords(b200x8):
    a = analysis.prefill_time("kimi-k2", b200x8, isl=1024, layout="tp=8", runtime="nccl")
    b = analysis.prefill_time("kimi-k2", b200x8, isl=1024, layout="tp=8", runtime="ideal")
    assert math.isfinite(a.total) and math.isfinite(b.total) and a.total >= b.total


def test_no_float_residue_in_the_compute_share(b200x8):
    # (vLLM's kernels: under TensorRT-LLM's, since session 26, kimi-k2's router runs its
    # measured cuBLAS Linear, whose time is compute the reads do not hide, a real share)
    s = analysis.single_user_speed("kimi-k2", b200x8, speculative=((0, 0.0),),
                                   layouts=["tp=8"], engine="vllm")
    assert s.shares["compute"] == 0.0
    assert abs(sum(s.shares.values()) - s.tpot) < 1e-12


# ---------------------------------------------------------------------------------------
# report's --sizes/--ops and scaling's --families/--sizes given again kept only the last
# list (argparse's default for nargs="+"), silently, as cost's --op/--size/--ranks did
# before session 16 (audit): now each adds to its list, and an option not given at all
# still means the default.

from analysis._cli import build_parser


@pytest.mark.parametrize("argv, key, expected", [
    (["report", "--sizes", "1KiB", "--sizes", "4KiB", "1MiB"], "sizes",
     ["1KiB", "4KiB", "1MiB"]),
    (["report", "--ops", "all-reduce", "--ops", "all-gather"], "ops",
     ["all-reduce", "all-gather"]),
    (["scaling", "--families", "torus", "--families", "fat-tree"], "families",
     ["torus", "fat-tree"]),
    (["scaling", "--sizes", "64", "--sizes", "512", "4096"], "sizes", [64, 512, 4096]),
])
def test_list_options_given_again_add_to_their_list(argv, key, expected):
    assert getattr(build_parser().parse_args(argv), key) == expected


def test_scaling_defaults_are_the_studys_own(capsys):
    import inspect

    from analysis._scaling import SCALING_FAMILIES, scaling_study

    args = build_parser().parse_args(["scaling"])
    assert args.families is None and args.sizes is None     # scaling_study's defaults apply
    with pytest.raises(SystemExit):
        build_parser().parse_args(["scaling", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    sizes = inspect.signature(scaling_study).parameters["sizes"].default
    assert "(default: " + " ".join(map(str, sizes)) + ")" in text
    assert "(default: " + " ".join(SCALING_FAMILIES) + ")" in text
