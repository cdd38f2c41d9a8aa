"""Session 25 (models): ``cofabric decode --moe-backend cutlass|trtllm``, the CLI's way to
``decode_step(moe_backend=...)`` (session 24 added the keyword; the CLI lacked it). The tests
fail on the parent commit (argparse refused the unknown option with exit 2)."""

import json

import pytest

import analysis
import topologies
from tests.cli_run import run_cli

ARGS = ["decode", "hgx-b200", "--model", "deepseek-r1-nvfp4", "--context", "2048",
        "--layout", "tp=8,dp=1,etp=4"]
KW = {"batch": 1, "context": 2048, "layout": "tp=8,dp=1,etp=4"}


@pytest.fixture(scope="module")
def b200():
    return topologies.build("hgx-b200")


def _json(argv):
    rc, out, err = run_cli(argv + ["--json"])
    assert rc == 0, err
    return json.loads(out)


def test_the_flag_reaches_decode_step(b200):
    got = {b: _json(ARGS + ["--moe-backend", b])["time"] for b in ("cutlass", "trtllm")}
    want = {b: analysis.decode_step("deepseek-r1-nvfp4", b200, moe_backend=b, **KW).time
            for b in ("cutlass", "trtllm")}
    assert got == pytest.approx(want, rel=1e-12)
    assert got["trtllm"] != pytest.approx(got["cutlass"], rel=1e-6)   # the flag took
    assert _json(ARGS)["time"] == pytest.approx(want["cutlass"], rel=1e-12)   # the default
    names = [p["name"] for p in _json(ARGS + ["--moe-backend", "trtllm"])["parameters"]]
    assert any(n.startswith("gemm.moe_module_time.b200.fp4.trtllm.etp4.ep2.") for n in names)


def test_the_speculative_steps_take_it_too(b200):
    spec = ["--draft-length", "3", "--acceptance", "0.7"]
    got = _json(ARGS + spec + ["--moe-backend", "trtllm"])
    m = "deepseek-r1-nvfp4"
    draft = analysis.decode_step(m, b200, draft=True, moe_backend="trtllm", **KW).time
    want = analysis.speculative_decode(m, b200, draft_length=3, acceptance=0.7,
                                       draft_time=draft, moe_backend="trtllm", **KW)
    assert got["speculative"]["cycle_time"] == pytest.approx(want.cycle_time, rel=1e-12)
    assert got["speculative"]["verify_time"] == pytest.approx(want.verify_time, rel=1e-12)
    plain = _json(ARGS + spec)["speculative"]["cycle_time"]
    assert plain != pytest.approx(want.cycle_time, rel=1e-6)


def test_the_header_says_whether_the_module_was_taken():
    rc, out, err = run_cli(ARGS + ["--moe-backend", "trtllm"])
    assert rc == 0, err
    assert "MoE backend trtllm: its module as measured (analysis.moe_module_time)" in out
    # tp=1,dp=8 under an all-to-all the collectives price: the module is not taken
    rc, out, err = run_cli(ARGS[:6] + ["--layout", "tp=1,dp=8", "--ep-kernel", "all-to-allv",
                                       "--moe-backend", "trtllm"])
    assert rc == 0, err
    assert "MoE backend trtllm: no module measured at this step's expert layout" in out
    rc, out, err = run_cli(ARGS[:6] + ["--layout", "tp=1,dp=8", "--ep-kernel", "all-to-allv"])
    assert rc == 0, err
    assert "MoE backend" not in out       # the default, no module: nothing said


def test_help_names_the_default():
    rc, out, _ = run_cli(["decode", "--help"])
    assert rc == 0
    text = " ".join(out.split())
    assert "--moe-backend {cutlass,trtllm}" in text
    assert "(the default)" in text[text.index("--moe-backend {"):]


@pytest.mark.parametrize("argv, words", [
    (ARGS + ["--moe-backend", "deepgemm"],
     ("argument --moe-backend: invalid choice: 'deepgemm'", "'cutlass', 'trtllm'")),
    (["decode", "hgx-h200", "--model", "deepseek-r1", "--moe-backend", "trtllm"],
     ("moe_backend='trtllm'", "Blackwell", "h200")),
    (ARGS + ["--moe-backend", "trtllm", "--engine", "vllm"], ("Blackwell", "'vllm'")),
])
def test_bad_backend_one_line_exit_2(argv, words):
    rc, out, err = run_cli(argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("cofabric decode: error: ")
    for w in words:
        assert w in err
