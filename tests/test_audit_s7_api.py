"""Audit (session 7): bad input to the API added in session 6 gives an error that names it."""

import math

import numpy as np
import pytest

import analysis
import fabric
import topologies
from fabric import SpecError


def test_every_tagged_release_loads_and_its_timing_says_what_it_revises():
    # the timing runtime's name lists the fields a later release's sourced revision replaced
    # (under the strict rule most releases are timed by their own tables, and say so)
    newest = fabric.runtime("nccl")
    fields = ("base_latency", "hw_latency", "ll_max_bw", "ring_ll128_bw", "tree_bw",
              "tree_ll128_bw", "nvls_tree_bw", "factors", "nvls", "p2p")
    for release in fabric.NCCL_RELEASE_DATES:
        rt = fabric.runtime(f"nccl@{release}")
        assert rt.version == release
        if rt is newest:
            continue
        t = rt.timing
        revised = sorted(f for f in fields if getattr(t, f) != getattr(rt, f))
        want = (f"sourced revisions of {', '.join(revised)}" if revised else "its own tables")
        assert t.name == f"nccl@{release} timed with {want}"


@pytest.mark.parametrize("kw", [
    {"model": "bogus"}, {"chip": "nochip"}, {"engine": "bogus"}, {"engine": None},
])
@pytest.mark.parametrize("graphs,engine", [(True, "trtllm"), (False, "trtllm"), (True, "vllm")])
def test_step_kernel_lists_refuses_unknown_names_on_every_path(kw, graphs, engine):
    """With cuda_graphs=False, or an engine other than trtllm, the model, chip and engine
    were never read: step_kernel_lists('bogus', 'nochip', cuda_graphs=False) answered."""
    args = {"model": "deepseek-r1", "chip": "h200", "engine": engine, **kw}
    # engine=None is a name of the wrong kind: check_choice's TypeError (session 38)
    error = TypeError if kw == {"engine": None} else SpecError
    with pytest.raises(error, match="unknown model|unknown chip|engine must be"):
        analysis.step_kernel_lists(args.pop("model"), args.pop("chip"), cuda_graphs=graphs,
                                   **args)


@pytest.mark.parametrize("bad, error", [(True, TypeError), (0, SpecError), (-1, SpecError),
                                        (4.0, TypeError), ("4", TypeError), (None, TypeError),
                                        (math.nan, TypeError)])
def test_instance_chips_and_idle_chips_name_a_bad_count(bad, error):
    # a count of the wrong kind is a TypeError, one out of range a SpecError (lead, session 31)
    f = topologies.build("rail:servers=3,gpus=4")
    for fn in (analysis.instance_chips, analysis.idle_chips):
        with pytest.raises(error, match=r"chips must be an integer >= 1"):
            fn(f, bad)


@pytest.mark.parametrize("bad", [1, 0, None, "yes"])
def test_equal_domains_is_a_bool(bad):
    f = topologies.build("rail:servers=3,gpus=4")
    for fn in (analysis.instance_chips, analysis.idle_chips):
        with pytest.raises(TypeError, match="equal_domains must be True or False"):
            fn(f, 4, equal_domains=bad)


def test_equal_domains_takes_a_numpy_bool_as_its_bool():
    # session 30 (lead's decision): numpy bools are flags everywhere, as numpy ints are counts
    f = topologies.build("rail:servers=3,gpus=4")
    for fn in (analysis.instance_chips, analysis.idle_chips):
        for flag in (True, False):
            assert fn(f, 4, equal_domains=np.bool_(flag)) == fn(f, 4, equal_domains=flag)


@pytest.mark.parametrize("args,exc,match", [
    ((math.nan, 3e-6, 8), SpecError, "gpu_time must be a finite number >= 0 seconds, got gpu_time=nan"),
    ((1e-5, math.inf, 8), SpecError, "host_launch must be a finite number >= 0 seconds, got host_launch=inf"),
    ((-1.0, 3e-6, 8), SpecError, "gpu_time must be a finite number >= 0 seconds, got gpu_time=-1.0"),
    ((True, 3e-6, 8), TypeError, r"gpu_time must be a finite number >= 0 seconds, got gpu_time=True \(a bool\)"),
    ((1e-5, 3e-6, 0), SpecError, "devices must be an integer >= 1"),
    ((1e-5, 3e-6, True), TypeError, "devices must be an integer >= 1"),
    ((1e-5, 3e-6, 8, 0), SpecError, "iterations must be an integer >= 1"),
    ((1e-5, 3e-6, 8, 2.5), TypeError, "iterations must be an integer >= 1"),
    ((1e-5, 3e-6, 8, 20, 1), TypeError, "blocking must be True or False"),
])
def test_host_launch_delay_names_a_bad_argument(args, exc, match):
    with pytest.raises(exc, match=match):
        analysis.host_launch_delay(*args)


@pytest.mark.parametrize("part", ["Experts", None, 1, "mtp"])
def test_part_format_names_the_parts(part):
    m = analysis.model_config("deepseek-r1")
    # a wrong kind is a TypeError (STYLE, session 32; check_choice, session 37): None and 1
    # were SpecErrors 'part must be one of ...'
    said = "^part must be one of attention, ffn, experts, router, head, scores, got "
    error, match = ((SpecError, said) if isinstance(part, str) else
                    (TypeError, "^part must be a str, got "))
    for fn in (m.part_format, m.math_format):
        with pytest.raises(error, match=match):
            fn(part)


@pytest.fixture(scope="module")
def node_without_chip3():
    return topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200").without(
        chips=["chip3"])


@pytest.mark.parametrize("instance,match", [
    (["chip0", "chip1", "chip2", "chip3"], r"not live chips of .*: \['chip3'\]"),
    ([0, 1, 2, 4], r"by name .*not live chips of .*: \[0, 1, 2, 4\]"),
    (["chip0"] * 4, r"named twice: \['chip0'\]"),
    (("chip0", "chip1", "chip2"), "got 3$"),
    ([["chip0"]] * 4, "not live chips"),            # was TypeError: unhashable
    (5, "got 1; not live chips"),                    # was TypeError: not iterable
])
def test_prefill_instance_errors_say_what_is_wrong(node_without_chip3, instance, match):
    from test_audit_s7_serving import SMALL
    with pytest.raises(SpecError, match=match):
        analysis.prefill_time(SMALL, node_without_chip3, isl=64, layout="tp=4,dp=1",
                              instance=instance)


def test_prefill_instance_runs_on_the_chips_decode_names(node_without_chip3):
    from test_audit_s7_serving import SMALL
    step = analysis.decode_step(SMALL, node_without_chip3, batch=4, context=64,
                                layout="tp=4,dp=1")
    a = analysis.prefill_time(SMALL, node_without_chip3, isl=64, layout="tp=4,dp=1",
                              instance=step.instance)
    b = analysis.prefill_time(SMALL, node_without_chip3, isl=64, layout="tp=4,dp=1")
    assert step.instance == ("chip0", "chip1", "chip2", "chip4") and a == b


@pytest.mark.parametrize("name", ["efficiency", "hbm_efficiency"])
def test_prefill_efficiency_is_not_a_bool(node_without_chip3, name):
    from test_audit_s7_serving import SMALL
    with pytest.raises(TypeError, match=f"{name} must be in \\(0, 1\\], got {name}=True"):
        analysis.prefill_time(SMALL, node_without_chip3, isl=64, layout="tp=4,dp=1",
                              **{name: True})


def test_cost_help_states_the_releases_the_runtime_takes(capsys):
    """`cofabric cost --help` said nccl@<release> takes 2.19 to 2.30.7; 2.18.3 loads."""
    from analysis._cli import main

    with pytest.raises(SystemExit) as done:      # argparse's --help: status 0
        main(["cost", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    oldest = min(fabric.NCCL_RELEASE_DATES, key=lambda v: tuple(map(int, v.split("."))))
    newest = fabric.runtime("nccl").version
    assert f"({oldest} to {newest})" in " ".join(out.split())
    fabric.runtime(f"nccl@{oldest}")


@pytest.mark.parametrize("ep", [None, 8.0, "chip0", True])
def test_moe_exchange_names_a_bad_ep(ep):
    f = topologies.build("nvl72")
    with pytest.raises(TypeError, match="ep must be an int or a sequence of ranks"):
        analysis.moe_exchange(f, "deepseek-v3", 512, ep, kernel="one-sided", dispatch_bytes=2,
                              combine_bytes=2, routing="balanced")


def test_numpy_integers_are_integers_everywhere_decode_takes_them():
    """decode_step took np.int64 batch and context, but a layout {'tp': np.int64(2)},
    instance_chips/idle_chips(np.int64(4)), prefill_time(isl=np.int64) and serving_point's
    batch/isl/osl were refused as 'must be an integer'. Results carry plain ints."""
    from test_audit_s7_serving import SMALL
    f = topologies.build("switch:8,chip=b200")
    i = np.int64
    s = analysis.decode_step(SMALL, f, batch=i(8), context=i(64), layout={"tp": i(2), "dp": 1})
    assert type(s.layout.tp) is int and s.layout == analysis.parse_layout("tp=2,dp=1", 8)
    assert analysis.instance_chips(f, i(4), tp=i(2)) == analysis.instance_chips(f, 4, tp=2)
    assert analysis.idle_chips(f, i(3)) == analysis.idle_chips(f, 3) == 2
    assert analysis.prefill_time(SMALL, f, isl=i(64), layout="tp=2,dp=1") == \
        analysis.prefill_time(SMALL, f, isl=64, layout="tp=2,dp=1")
    kw = {"layout": "tp=2,dp=1", "micro_batches": 1}
    a = analysis.serving_point(SMALL, f, isl=i(64), osl=i(16), batch=i(4), **kw)
    b = analysis.serving_point(SMALL, f, isl=64, osl=16, batch=4, **kw)
    assert a == b and type(a.batch) is int


def test_serve_takes_the_draft_cost_its_skip_line_asks_for(capsys):
    """serve told a kimi-k2 user to 'pass draft_cost=' but had no such option."""
    import types

    from analysis._cli import main

    def cli(argv):                      # in this process: main's status and its output
        code = main(argv)
        out, err = capsys.readouterr()
        return types.SimpleNamespace(returncode=code, stdout=out, stderr=err)

    base = ["serve", "switch:8,planes=2,links=9,tech=nvlink5,chip=b200", "--model", "kimi-k2",
            "--isl", "1024", "--osl", "256", "--batches", "1", "--quiet"]
    bads = ((["--draft-cost", "nan"], "draft_cost must be a finite number >= 0"),
            (["--draft-cost", "0.1", "--no-speculative"], "--no-speculative has none"))
    plain, priced, *outs = [cli(argv) for argv in [base, [*base, "--draft-cost", "0.1"]]
                            + [[*base, *bad] for bad, _ in bads]]
    assert plain.returncode == 0 and "CLI: --draft-cost" in plain.stdout
    assert priced.returncode == 0 and "skipped speculative" not in priced.stdout
    assert "drafted)" in priced.stdout and " 0 drafted)" not in priced.stdout
    for out, (_, msg) in zip(outs, bads, strict=True):
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
        assert msg in out.stderr
