"""``cofabric serve``: table, JSON, one-line errors."""

import json

import pytest

from analysis._cli import main

NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


def test_serve_json(capsys):
    assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "1024", "--osl", "256",
                 "--batches", "1,8", "--layout", "tp=8", "--no-speculative", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["definition"] == "total-per-gpu" and "InferenceX" in out["definition_text"]
    front = out["frontier"]
    assert [p["batch"] for p in front] == [1, 8]
    assert all(p["fits"] and p["usd_per_million_tokens"] > 0 for p in front)
    assert out["single_user"]["limiter"] in out["single_user"]["shares_s_per_token"]
    assert out["usd_per_gpu_hour"] == 1.95
    # the settings that ran are recorded (audit s10): defaults here, given options below
    st = out["settings"]
    assert (st["engine"], st["pdl"], st["cuda_graphs"], st["kv_inflow"]) == \
        ("trtllm", False, True, False)
    assert st["max_batched_tokens"] is None and st["kernel_floors"] is True
    assert st["speculative_options"] == [{"draft_length": 0, "acceptance": 0.0}]


def test_serve_json_records_the_options_given(capsys):
    assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "1024", "--osl", "256",
                 "--batches", "1,8", "--layout", "tp=8", "--no-speculative", "--json",
                 "--engine", "vllm", "--pdl", "--max-batched-tokens", "4096",
                 "--no-kernel-floors", "--fusion", "2", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    st = out["settings"]
    assert (st["engine"], st["pdl"], st["max_batched_tokens"], st["kernel_floors"],
            st["fusion_factor"]) == ("vllm", True, 4096, False, 2.0)
    assert out["units"]["max_batched_tokens"] == "tokens"
    assert out["units"]["fusion_factor"].startswith("1")


def test_serve_table(capsys):
    assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "512", "--osl", "128",
                 "--batches", "4", "--layout", "tp=8", "--mode", "disaggregated",
                 "--definition", "output-per-decode-gpu"]) == 0
    out = capsys.readouterr().out
    assert "output tokens per second per decode GPU" in out and "single user:" in out


def test_serve_bad_input_one_line(capsys):
    assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "0", "--osl", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "isl must be" in err
    assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "8", "--osl", "8",
                 "--batches", "a,b"]) == 2
    assert "--batches" in capsys.readouterr().err
    # a bad decode setting is named once, not as "fits no layout" repeated per layout
    assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "8", "--osl", "8",
                 "--moe-hbm-efficiency", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fits no layout" not in err
    assert err.count("moe_hbm_efficiency must be in") == 1
    assert main(["serve", "sd200-ultra", "--model", "kimi-k2", "--isl", "8", "--osl", "8",
                 "--batches", "1", "--layout", "tp=8,dp=16", "--no-speculative"]) == 0
    out = capsys.readouterr().out
    assert "cost: chip price" in out and "bill_of_materials" in out   # no published price


def test_serve_passes_decode_settings(capsys):
    base = ["serve", NODE, "--model", "kimi-k2", "--isl", "512", "--osl", "128", "--batches",
            "1", "--layout", "tp=8", "--no-speculative", "--json"]
    assert main([*base, "--no-cuda-graphs"]) == 0
    eager = json.loads(capsys.readouterr().out)["frontier"][0]["tpot_s"]
    assert main(base) == 0                    # CUDA graphs by default
    graphs = json.loads(capsys.readouterr().out)["frontier"][0]["tpot_s"]
    assert graphs < eager                     # graph replay removes host launch time
    assert main([*base, "--micro-batches", "0"]) == 2
    assert "micro_batches" in capsys.readouterr().err


def test_serve_reproduces_the_library_on_a_check_row_s_conditions(capsys):
    # the k2-h200-int4-c16 row's conditions (tests/serving_check.py) through the CLI: since
    # decode_step(engine="vllm") defaults its collective to vLLM's per-size dispatch
    # (analysis.engine_collective), `serve --engine vllm` asks the row's own question, and an
    # explicit --runtime asks the library's one-runtime question
    import serving_check as sc

    import analysis
    import topologies

    row = next(r for r in sc.load_rows() if r["id"] == "k2-h200-int4-c16")
    kw = sc.conditions(row)
    assert kw.pop("collective") is sc.vllm_all_reduce
    fab = topologies.build(kw.pop("system"))
    model = kw.pop("model")
    kw.pop("usable_hbm")
    row_point = analysis.serving_point(model, fab, collective=analysis.vllm_all_reduce, **kw)
    one_runtime = analysis.serving_point(model, fab, runtime="symmetric-memory", **kw)
    args = ["serve", sc.H200_NODE, "--model", "kimi-k2.5-int4", "--isl", str(kw["isl"]),
            "--osl", str(kw["osl"]), "--batches", "16", "--layout", "tp=8,dp=1,etp=8",
            "--no-speculative", "--engine", "vllm", "--json"]
    assert main(args) == 0
    cli = json.loads(capsys.readouterr().out)["frontier"][0]
    assert cli["tpot_s"] == pytest.approx(row_point.tpot, rel=1e-12)
    assert main([*args, "--runtime", "symmetric-memory"]) == 0
    cli_rt = json.loads(capsys.readouterr().out)["frontier"][0]
    assert cli_rt["tpot_s"] == pytest.approx(one_runtime.tpot, rel=1e-12)
    assert cli_rt["tpot_s"] != cli["tpot_s"]     # the dispatch is not one runtime's choice
    assert main([*args, "--moe-hbm-efficiency", "0.78"]) == 0
    assert json.loads(capsys.readouterr().out)["frontier"][0]["tpot_s"] < row_point.tpot


def test_serve_and_decode_share_the_decode_step_options():
    import argparse

    from analysis import _cli_decode, _cli_serve

    def options(register):
        sub = argparse.ArgumentParser().add_subparsers()
        register(sub)
        (parser,) = sub.choices.values()
        return {a.dest: (a.default, a.help) for a in parser._actions if a.option_strings}

    decode, serve = options(_cli_decode.register), options(_cli_serve.register)
    shared = {"runtime", "ep_kernel", "cuda_graphs", "engine", "overlap", "fusion",
              "moe_hbm_efficiency"}
    assert shared <= set(decode) and shared <= set(serve)
    assert {k: decode[k] for k in shared} == {k: serve[k] for k in shared}


def test_serve_kernel_floors_flag(capsys):
    runs = {}
    for flag in ("--kernel-floors", "--no-kernel-floors"):
        assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "1024", "--osl", "256",
                     "--batches", "4", "--layout", "tp=8", "--no-speculative", "--json",
                     flag]) == 0
        runs[flag] = json.loads(capsys.readouterr().out)["single_user"]
    assert runs["--no-kernel-floors"]["shares_s_per_token"]["kernel floors"] == 0.0
    assert runs["--kernel-floors"]["shares_s_per_token"]["kernel floors"] > 0
    assert runs["--kernel-floors"]["tokens_per_s"] < runs["--no-kernel-floors"]["tokens_per_s"]


def test_serve_odd_systems_and_contexts_say_what_is_wrong_in_a_short_line(capsys):
    # a fabric without a chip: named as decode names it (was "unknown chip None")
    assert main(["serve", "mesh:2", "--model", "kimi-k2", "--isl", "8", "--osl", "8",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'mesh:2' names no chip" in err and "None" not in err
    # a context no layout holds: one readable line naming the largest instance's need,
    # not every layout's reason (was 4.9 kB for nvl72)
    assert main(["serve", "nvl72", "--model", "deepseek-v3", "--isl", "10000000", "--osl",
                 "1024", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400
    assert "all 24 layouts are refused; the largest instance, tp=8,dp=9" in err
    assert "KV cache 702.8 GB" in err


def test_serve_says_which_batches_asked_for_a_layout_cannot_hold(capsys):
    # a batch above a layout's KV limit was dropped without a word
    args = ["serve", NODE, "--model", "kimi-k2", "--isl", "1024", "--osl", "1024", "--layout",
            "tp=8", "--layout", "tp=4,dp=2", "--batches", "1,390,100000", "--no-speculative",
            "--quiet"]
    # (390: tp=4,dp=2 holds 398 since session 26 stores the router gates, head and embedding
    # BF16, as the release does; it had held 400)
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    sizes = {p["layout"]: p["batch"] for p in out["frontier"]}
    assert sizes and all(b in (1, 390) for b in sizes.values())
    notes = [s for s in out["layouts_skipped"] if "the largest that fits" in s]
    assert len(notes) == 2
    assert any(s.startswith("tp=8,dp=1,ep=8: batches 390, 100000 exceed") for s in notes)
    assert any(s.startswith("tp=4,dp=2,ep=8: batch 100000 exceeds") for s in notes)
    assert main(args) == 0
    assert capsys.readouterr().out.count("the largest that fits") == 2


@pytest.mark.parametrize("argv, words", [
    # unknown model
    ([NODE, "--model", "gpt-9", "--isl", "100", "--osl", "100"], ["unknown model 'gpt-9'"]),
    # zero or negative lengths
    ([NODE, "--model", "kimi-k2", "--isl", "0", "--osl", "100"], ["isl must be", "isl=0"]),
    ([NODE, "--model", "kimi-k2", "--isl", "100", "--osl", "0"], ["osl must be", "osl=0"]),
    # a system where no layout fits memory: the weights exceed every chip's HBM together
    (["mesh:2,chip=h100", "--model", "kimi-k2", "--isl", "100", "--osl", "100"],
     ["fits no layout", "weights (1028.9 GB)", "2 chips"]),
    # a degraded fabric: too few chips left for the weights; a chip every layout needs cut off
    (["hgx-h200", "--model", "kimi-k2", "--isl", "100", "--osl", "100",
      *[f"--fail-chip=chip{i}" for i in range(5)]], ["fits no layout", "3 chips"]),
    (["switch:8,chip=b200", "--model", "deepseek-v3", "--isl", "100", "--osl", "100",
      "--fail-link", "chip3-sw0", "--no-speculative"],
     ["every layout", "chip3 is cut off", "link chip3-sw0 failed"]),
    (["hgx-h200", "--model", "kimi-k2", "--isl", "100", "--osl", "100",
      *[f"--fail-chip=chip{i}" for i in range(8)]], ["leaves no chip"]),
    # a model file that is not there
    ([NODE, "--model", "/nonexistent/model.toml", "--isl", "100", "--osl", "100"],
     ["/nonexistent/model.toml"]),
    # a token budget for an engine that does not mix; one of 0; KV inflow when aggregated
    ([NODE, "--model", "kimi-k2", "--isl", "100", "--osl", "100", "--engine", "sglang",
      "--max-batched-tokens", "4096"], ["runs prompts on their own"]),
    ([NODE, "--model", "kimi-k2", "--isl", "100", "--osl", "100",
      "--max-batched-tokens", "0"], ["max_batched_tokens must be"]),
    ([NODE, "--model", "kimi-k2", "--isl", "100", "--osl", "100", "--kv-inflow"],
     ["disaggregated"]),
])
def test_serve_refuses_bad_input_in_one_line_with_exit_2(capsys, argv, words):
    assert main(["serve", *argv, "--quiet"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "Traceback" not in cap.err
    assert cap.err.startswith("cofabric serve: error: ")
    for w in words:
        assert w in cap.err, (w, cap.err)


@pytest.mark.parametrize("argv, flag, value", [
    ([NODE, "--model", "kimi-k2", "--isl", "-3", "--osl", "100"], "--isl", "-3"),
    ([NODE, "--model", "kimi-k2", "--isl", "100", "--osl", "-5"], "--osl", "-5"),
])
def test_serve_refuses_a_negative_length_by_its_flag(capsys, argv, flag, value):
    # no integer flag takes a sign (lead, session 19): argparse refuses it, naming the flag
    with pytest.raises(SystemExit) as e:
        main(["serve", *argv, "--quiet"])
    cap = capsys.readouterr()
    assert e.value.code == 2 and cap.out == "" and cap.err.count("\n") == 1
    assert f"argument {flag}: takes a whole number in ASCII digits 0-9, got '{value}'" in cap.err


@pytest.mark.parametrize("kw, error, match", [
    ({"model": "gpt-9"}, "SpecError", "unknown model"),
    ({"isl": 0}, "SpecError", "isl must be an integer >= 1"),
    ({"osl": -1}, "SpecError", "osl must be an integer >= 1"),
    ({"isl": 1.5}, "TypeError", "isl must be an integer >= 1"),   # a wrong kind (session 31)
    ({"osl": True}, "TypeError", "osl must be an integer >= 1"),
])
def test_serving_api_refuses_the_same_inputs(kw, error, match):
    import analysis
    import topologies
    from fabric import SpecError

    f = topologies.build(NODE)
    args = {"model": "kimi-k2", "isl": 100, "osl": 100, **kw}
    model = args.pop("model")
    for call in (lambda: analysis.serving_frontier(model, f, layouts=("tp=8",), **args),
                 lambda: analysis.serving_point(model, f, batch=1, layout="tp=8", **args),
                 lambda: analysis.single_user_speed(model, f, layouts=("tp=8",), **args)):
        with pytest.raises({"SpecError": SpecError, "TypeError": TypeError}[error], match=match):
            call()


def test_serve_passes_the_step_budget_and_kv_inflow(capsys):
    import analysis
    import topologies

    # vLLM chunks the 4096-token prompt into what each step leaves (TensorRT-LLM would run it
    # only whole: not within 2048 tokens)
    base = ["serve", NODE, "--model", "kimi-k2", "--isl", "4096", "--osl", "256", "--batches",
            "8", "--layout", "tp=8", "--no-speculative", "--json", "--quiet",
            "--engine", "vllm"]
    assert main([*base, "--max-batched-tokens", "2048"]) == 0
    got = json.loads(capsys.readouterr().out)["frontier"][0]["shared_read_s"]
    want = analysis.serving_point("kimi-k2", topologies.build(NODE), isl=4096, osl=256,
                                  batch=8, layout="tp=8", max_batched_tokens=2048,
                                  engine="vllm").shared_read
    assert got == pytest.approx(want)
    # KV inflow: a disaggregated decode instance whose experts an exchange kernel moves
    dis = ["serve", "rail:servers=2,gpus=8,chip=h200", "--model", "deepseek-v3", "--isl",
           "2000", "--osl", "100", "--batches", "64", "--layout", "tp=1,dp=16",
           "--no-speculative", "--json",
           "--quiet", "--mode", "disaggregated", "--ep-kernel", "deepep-low-latency"]
    assert main(dis) == 0
    plain = json.loads(capsys.readouterr().out)["frontier"][0]["cycle_time_s"]
    assert main([*dis, "--kv-inflow"]) == 0
    assert json.loads(capsys.readouterr().out)["frontier"][0]["cycle_time_s"] > plain


def test_serve_says_when_the_admission_cap_binds(capsys):
    # TensorRT-LLM (the default engine) runs a 1024-token prompt only whole: with 1030 tokens a
    # step a rank runs 7 of batch 8 and the eighth waits (the table row, a line that says so,
    # and the JSON's fields)
    base = ["serve", NODE, "--model", "kimi-k2", "--isl", "1024", "--osl", "64", "--batches",
            "8", "--layout", "tp=8", "--no-speculative", "--quiet", "--max-batched-tokens",
            "1030"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "batch 8 (tp=8,dp=1, 0 drafted) runs 7: the engine admits 7 a rank" in out
    assert main([*base, "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["frontier"][0]
    assert (p["batch"], p["running"], p["admission_cap"]) == (8, 7, 7)
    assert p["queue_time_s"] > 0
    # one token more and every request runs: no line
    assert main([*base[:-1], "1031"]) == 0
    assert "admits" not in capsys.readouterr().out
