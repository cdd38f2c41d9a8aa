"""Session 26 (models): ``cofabric serve --moe-backend cutlass|trtllm``, the serve command's way
to ``serving_frontier(moe_backend=...)`` / ``single_user_speed(moe_backend=...)`` (both pass it
to every decode step; session 25 gave it to ``cofabric decode`` only). One definition of the
flag serves both commands (``analysis._cli_decode.add_step_options``). The tests fail on the
parent commit: argparse refused the unknown option with exit 2."""

import json

import pytest

import analysis
import topologies
from tests.cli_run import run_cli

MODEL = "deepseek-r1-nvfp4"
# experts TP4 x EP2: the trtllm backend's module was measured at this layout (1-384 tokens)
ARGS = ["serve", "hgx-b200", "--model", MODEL, "--isl", "1024", "--osl", "1024",
        "--layout", "tp=8,dp=1,etp=4", "--batches", "1,4", "--no-speculative", "--quiet"]
KW = {"isl": 1024, "osl": 1024, "layouts": ["tp=8,dp=1,etp=4"], "batches": (1, 4),
      "speculative": ((0, 0.0),)}


@pytest.fixture(scope="module")
def b200():
    return topologies.build("hgx-b200")


def _json(argv):
    rc, out, err = run_cli(argv + ["--json"])
    assert rc == 0, err
    return json.loads(out)


def test_the_flag_reaches_the_frontier_and_the_single_user(b200):
    got = {b: _json(ARGS + ["--moe-backend", b]) for b in ("cutlass", "trtllm")}
    for b, out in got.items():
        fr = analysis.serving_frontier(MODEL, b200, moe_backend=b, **KW)
        assert [p["tpot_s"] for p in out["frontier"]] == pytest.approx(
            [p.tpot for p in fr.points], rel=1e-12)
        su = analysis.single_user_speed(MODEL, b200, isl=1024, osl=1024,
                                        layouts=KW["layouts"], speculative=KW["speculative"],
                                        moe_backend=b)
        assert out["single_user"]["tpot_s"] == pytest.approx(su.tpot, rel=1e-12)
        assert out["settings"]["moe_backend"] == b          # recorded: the JSON reproduces
    # the flag took: the trtllm module's measured time is not CUTLASS's
    assert got["trtllm"]["single_user"]["tpot_s"] != pytest.approx(
        got["cutlass"]["single_user"]["tpot_s"], rel=1e-6)
    # the default is decode_step's, cutlass
    assert _json(ARGS)["frontier"] == got["cutlass"]["frontier"]


def test_the_header_says_a_backend_other_than_the_default():
    rc, out, err = run_cli(ARGS + ["--moe-backend", "trtllm"])
    assert rc == 0, err
    step = next(line for line in out.splitlines() if line.startswith("decode step:"))
    assert step.endswith(", MoE backend trtllm")
    rc, out, err = run_cli(ARGS)
    assert rc == 0, err
    assert "MoE backend" not in out


def test_help_names_the_default_in_both_commands():
    for cmd in ("serve", "decode"):
        rc, out, _ = run_cli([cmd, "--help"])
        assert rc == 0
        text = " ".join(out.split())
        entry = "--moe-backend {cutlass,trtllm} TensorRT-LLM's MoE backend"
        assert text.count(entry) == 1, cmd
        assert "(the default)" in text[text.index(entry):], cmd


@pytest.mark.parametrize("extra, words", [
    (["--moe-backend", "deepgemm"],
     ("argument --moe-backend: invalid choice: 'deepgemm'", "'cutlass', 'trtllm'")),
    (["--moe-backend", "trtllm", "--engine", "vllm"],
     ("moe_backend='trtllm'", "Blackwell", "'vllm'")),
])
def test_bad_values_one_line_exit_2(extra, words):
    rc, out, err = run_cli(ARGS + extra)
    assert rc == 2 and not out
    assert err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)


def test_off_blackwell_one_line_exit_2():
    rc, out, err = run_cli(["serve", "hgx-h200", "--model", "deepseek-r1", "--isl", "1024",
                            "--osl", "1024", "--layout", "tp=8", "--batches", "1",
                            "--no-speculative", "--quiet", "--moe-backend", "trtllm"])
    assert rc == 2 and not out
    assert err.count("\n") == 1, err
    assert "moe_backend='trtllm'" in err and "h200" in err and "Blackwell" in err
