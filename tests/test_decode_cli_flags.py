"""``cofabric decode`` and ``cofabric serve``: ``--pdl`` (Programmatic Dependent Launch,
``decode_step(pdl=True)``) and ``cofabric decode --graph-batch`` (a padded CUDA graph,
``decode_step(graph_batch=...)``): the CLI gives the library's figures, and bad input is one
line with exit status 2."""

import json

import pytest

import analysis
import topologies
from analysis._cli import main

B200 = "hgx-b200"
DECODE = ["decode", B200, "--model", "deepseek-r1-nvfp4", "--layout", "tp=8,dp=1,etp=2",
          "--runtime", "symmetric-memory", "--context", "2048", "--json"]
SERVE = ["serve", B200, "--model", "deepseek-r1-nvfp4", "--isl", "1024", "--osl", "2048",
         "--batches", "1", "--layout", "tp=8,dp=1,etp=2", "--runtime", "symmetric-memory",
         "--no-speculative", "--json", "--quiet"]


def _decode(capsys, *extra):
    assert main([*DECODE, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_decode_pdl_is_the_library_s_pdl_step(capsys):
    lib = analysis.decode_step("deepseek-r1-nvfp4", topologies.build(B200), batch=1,
                               context=2048, layout="tp=8,dp=1,etp=2",
                               runtime="symmetric-memory", pdl=True)
    on, off = _decode(capsys, "--pdl"), _decode(capsys)
    assert on["time"] == pytest.approx(lib.time, rel=1e-12)
    assert on["time"] < off["time"]
    assert _decode(capsys, "--no-pdl")["time"] == off["time"]       # off by default


def test_decode_text_names_pdl_padding_and_the_default_runtime(capsys):
    assert main(["decode", "hgx-h200", "--model", "kimi-k2.5-int4", "--layout", "tp=8",
                 "--batch", "5", "--graph-batch", "8", "--pdl"]) == 0
    out = capsys.readouterr().out
    assert "PDL, padded to 8 sequences" in out
    assert "runtime nccl," in out and "runtime default" not in out  # cost's default, named


def test_decode_graph_batch_is_the_library_s_padded_step(capsys):
    node = "hgx-h200"
    kw = {"context": 8192, "layout": "tp=8", "engine": "vllm"}
    lib = analysis.decode_step("kimi-k2.5-int4", topologies.build(node), batch=5,
                               graph_batch=8, **kw)
    args = ["decode", node, "--model", "kimi-k2.5-int4", "--layout", "tp=8", "--engine",
            "vllm", "--context", "8192", "--batch", "5", "--json"]
    assert main([*args, "--graph-batch", "8"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["time"] == pytest.approx(lib.time, rel=1e-12)
    assert data["graph_batch"] == 8 and data["batch"] == 5
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["time"] < data["time"]


def test_serve_pdl_is_the_library_s_pdl_point(capsys):
    fab = topologies.build(B200)
    lib = analysis.serving_point("deepseek-r1-nvfp4", fab, isl=1024, osl=2048, batch=1,
                                 layout="tp=8,dp=1,etp=2", runtime="symmetric-memory",
                                 pdl=True)
    assert main([*SERVE, "--pdl"]) == 0
    on = json.loads(capsys.readouterr().out)["frontier"][0]["tpot_s"]
    assert main(SERVE) == 0
    off = json.loads(capsys.readouterr().out)["frontier"][0]["tpot_s"]
    assert on == pytest.approx(lib.tpot, rel=1e-12)
    assert on < off


def test_pdl_is_one_shared_step_option():
    import argparse

    from analysis import _cli_decode, _cli_serve

    def option(register):
        sub = argparse.ArgumentParser().add_subparsers()
        register(sub)
        (parser,) = sub.choices.values()
        return next((a.default, a.help) for a in parser._actions if a.dest == "pdl")

    assert option(_cli_decode.register) == option(_cli_serve.register)
    assert option(_cli_decode.register)[0] is False


@pytest.mark.parametrize("argv, match", [
    ([*DECODE, "--pdl", "--no-cuda-graphs"], "pdl=True hides the dispatch gap"),
    ([*DECODE, "--graph-batch", "0"], "graph_batch must be an integer >= 1"),
    ([*DECODE, "--batch", "4", "--graph-batch", "2"], "graph_batch=2 is smaller than batch=4"),
    ([*DECODE, "--graph-batch", "2", "--no-cuda-graphs"], "cuda_graphs=False"),
    ([*DECODE, "--graph-batch", "two"], "--graph-batch"),
    ([*DECODE, "--pdl=yes"], "--pdl"),
    ([*SERVE, "--pdl", "--no-cuda-graphs"], "pdl=True hides the dispatch gap"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, match):
    try:
        status = main(argv)
    except SystemExit as e:       # argparse's own errors exit (still one line, status 2)
        status = e.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err and "Traceback" not in err
