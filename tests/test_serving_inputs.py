"""Serving inputs the late audit found answered: micro-batches above the batch, drafts of a
model without an MTP module, link failures in ``cofabric serve``, non-numeric parameters."""

import json
import numbers
import pathlib

import pytest

import analysis
import topologies
from analysis import decode_step, serving_frontier, serving_point, single_user_speed
from analysis._cli import main
from fabric import SpecError
from fabric._units import is_real

B200_NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
NO_SPEC = ((0, 0.0),)
SMALL = str(pathlib.Path(__file__).parent / "data" / "model_small.toml")


@pytest.fixture(scope="module")
def node():
    return topologies.build(B200_NODE)


def test_micro_batches_above_the_batch_are_refused(node):
    kw = {"isl": 256, "osl": 64, "layout": "tp=8"}
    with pytest.raises(SpecError, match="micro_batches=3 exceeds batch=2"):
        serving_point("deepseek-v3", node, batch=2, micro_batches=3, **kw)
    fkw = {"isl": 256, "osl": 64, "layouts": ["tp=8"], "speculative": NO_SPEC}
    with pytest.raises(SpecError, match="micro_batches=4 exceeds batch=1"):
        serving_frontier("deepseek-v3", node, batches=(1, 8), micro_batches=4, **fkw)
    # the default grid starts at the micro-batches: every point holds one sequence in each
    fr = serving_frontier("deepseek-v3", node, micro_batches=2, keep_all=True, **fkw)
    assert fr.all_points and min(p.batch for p in fr.all_points) == 2
    # u = batch still answers: u steps of one sequence each
    p = serving_point("deepseek-v3", node, batch=2, micro_batches=2, **kw)
    one = decode_step("deepseek-v3", node, batch=1, context=256 + 32, layout="tp=8")
    assert p.cycle_time == pytest.approx(2 * one.time, rel=1e-12)
    with pytest.raises(SpecError, match="single-user speed runs micro_batches=1"):
        single_user_speed("deepseek-v3", node, micro_batches=2, speculative=NO_SPEC)


def test_a_model_without_an_mtp_module_is_not_drafted_with_one(node):
    assert analysis.model_config("kimi-k2").mtp_modules == 0
    with pytest.raises(SpecError, match="kimi-k2 has none \\(mtp_modules=0\\)"):
        decode_step("kimi-k2", node, batch=1, context=100, layout="tp=8", draft=True)
    kw = {"isl": 256, "osl": 64, "layout": "tp=8", "batch": 1}
    with pytest.raises(SpecError, match="kimi-k2 has no multi-token-prediction module"):
        serving_point("kimi-k2", node, draft_length=2, **kw)
    # a separate draft model, its cost given, is priced as asked
    p = serving_point("kimi-k2", node, draft_length=2, draft_cost=0.05, **kw)
    assert p.draft_length == 2 and p.breakdown["draft"] > 0
    # the frontier's default settings: plain decoding, the drafted ones named as skipped
    fr = serving_frontier("kimi-k2", node, isl=256, osl=64, batches=(1,), layouts=["tp=8"],
                          keep_all=True)
    assert {p.draft_length for p in fr.all_points} == {0}
    assert any("speculative settings [1, 3]: kimi-k2 has no multi-token" in s
               for s in fr.skipped)
    with pytest.raises(SpecError, match="kimi-k2 has no multi-token-prediction module"):
        serving_frontier("kimi-k2", node, isl=256, osl=64, batches=(1,), layouts=["tp=8"],
                         speculative=((3, 0.8),))
    # a model with one keeps its drafts
    fr = serving_frontier("deepseek-v3", node, isl=256, osl=64, batches=(1,),
                          layouts=["tp=8"], keep_all=True)
    assert {p.draft_length for p in fr.all_points} == {0, 1, 3} and not fr.skipped


def test_report_parameters_are_numbers_or_named_choices(node):
    # every parameter of the step and the frontier is a number, or a choice by its name (a
    # schedule, a kernel list, a runtime) or a switch; never None or a word for "varies"
    st = decode_step("deepseek-v3", node, batch=8, context=1000, layout="tp=8")
    fr = serving_frontier("deepseek-v3", node, isl=256, osl=64, batches=(1,),
                          layouts=["tp=8"])
    for p in st.parameters + fr.parameters:
        if p.name.startswith(("decode.", "serving.", "gemm.")):
            assert isinstance(p.value, (str, numbers.Real)) and p.value != "priced", p
    names = {p.name for p in st.parameters}
    # B200 FP8 GEMMs have no published efficiency: the rule's number, peak, is listed
    peak = [p for p in st.parameters if p.name == "decode.compute_efficiency.unpublished"]
    assert peak and peak[0].value == 1.0 and "attention" in peak[0].source
    assert "decode.compute_efficiency" not in names and "decode.expert_balance" not in names
    # given values are listed as given
    st = decode_step("deepseek-v3", node, batch=8, context=1000, layout="tp=8",
                     compute_efficiency=0.5, expert_balance=0.8, cuda_graphs=False)
    given = {p.name: p.value for p in st.parameters}
    assert given["decode.compute_efficiency"] == 0.5 and given["decode.expert_balance"] == 0.8
    assert "decode.engine" not in given
    assert "decode.compute_efficiency.unpublished" not in given
    fr = serving_frontier("deepseek-v3", node, isl=256, osl=64, batches=(1,),
                          layouts=["tp=8"], draft_cost=0.1)
    assert {p.name: p.value for p in fr.parameters}["serving.draft_cost"] == 0.1


def test_cli_serve_takes_link_failures(capsys):
    # rail 2 x 4: chip0's NVLink cut leaves domains of 1, 3 and 4 chips
    args = ["serve", "rail:servers=2,gpus=4,chip=h100", "--model", SMALL, "--isl",
            "256", "--osl", "64", "--batches", "4", "--no-speculative", "--quiet",
            "--ep-kernel", "deepep-low-latency", "--json"]
    four = args + ["--layout", "tp=1,dp=4"]
    assert main(four) == 0
    intact = json.loads(capsys.readouterr().out)
    assert intact["failed_links"] == [] and intact["frontier"][0]["idle_chips"] == 0
    assert main(four + ["--fail-link", "chip0-nvs0"]) == 0
    cut = json.loads(capsys.readouterr().out)
    assert cut["failed_links"] == [["chip0", "nvs0"]] and cut["failed_chips"] == []
    assert cut["frontier"][0]["idle_chips"] == 4     # one copy of 4 in the intact domain
    # the 4 EP ranks take the intact domain, as intact they took the first: same answer
    a, b = intact["frontier"][0], cut["frontier"][0]
    assert b["tokens_per_s_user"] == pytest.approx(a["tokens_per_s_user"], rel=1e-12)
    # 8 EP ranks cannot fill domains of 1, 3 and 4 chips equally: one line, exit 2
    assert main(args + ["--layout", "tp=1,dp=8", "--fail-link", "chip0-nvs0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "equally" in err
    # a link that is not there: one line, exit 2
    assert main(four + ["--fail-link", "chip0-chip99"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "chip99" in err


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.1, True, "0.1"])
def test_a_bad_draft_cost_is_refused(node, bad):
    kw = {"isl": 256, "osl": 64, "layout": "tp=8", "batch": 1}
    error = SpecError if is_real(bad) else TypeError        # a wrong kind (s32)
    with pytest.raises(error, match="draft_cost must be a finite number >= 0"):
        serving_point("deepseek-v3", node, draft_length=2, draft_cost=bad, **kw)
    with pytest.raises(error, match="draft_cost must be a finite number >= 0"):
        serving_frontier("deepseek-v3", node, isl=256, osl=64, batches=(1,),
                         layouts=["tp=8"], draft_cost=bad)


def test_cli_decode_draft_cost_goes_with_a_draft_length(capsys):
    base = ["decode", B200_NODE, "--model", "deepseek-v3", "--batch", "8", "--context", "100",
            "--layout", "tp=8"]
    assert main(base + ["--draft-cost", "nan"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--draft-cost goes with --draft-length" in err
    assert main(base + ["--draft-length", "2", "--acceptance", "0.7", "--draft-cost",
                        "inf"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "finite" in err


def test_cli_decode_prices_a_draft_as_the_library_does(capsys):
    # review 2c: the CLI priced drafts free (draft cost 0) when --draft-cost was not given,
    # also for models without an MTP module, which the library refuses to price
    import json

    import topologies
    from analysis import decode_step, speculative_decode

    base = ["decode", B200_NODE, "--batch", "8", "--context", "100", "--layout", "tp=8",
            "--draft-length", "2", "--acceptance", "0.7"]
    assert main(base + ["--model", "kimi-k2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no multi-token-prediction module" in err
    assert "--draft-cost" in err
    assert main(base + ["--model", "kimi-k2", "--draft-cost", "0.05", "--json"]) == 0
    capsys.readouterr()
    assert main(base + ["--model", "deepseek-v3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["speculative"]
    f = topologies.build(B200_NODE)
    kw = {"batch": 8, "context": 100, "layout": "tp=8"}
    mtp = decode_step("deepseek-v3", f, draft=True, **kw).time
    assert mtp > 0
    want = speculative_decode("deepseek-v3", f, draft_length=2, acceptance=0.7, draft_time=mtp,
                              **kw)
    assert out["draft_time"] == pytest.approx(mtp, rel=1e-12)
    assert out["tokens_per_s_user"] == pytest.approx(want.tokens_per_s_user, rel=1e-12)
    for bad in ("nan", "inf", "-0.5"):
        assert main(base + ["--model", "deepseek-v3", "--draft-cost", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--draft-cost must be a finite number >= 0" in err
