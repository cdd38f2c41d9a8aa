"""Audit session 22: hostile files through the CLI (one line, exit 2, naming the problem).

A model file (``--model FILE.toml``) that is not UTF-8 text was an internal error (exit 3,
UnicodeDecodeError) in ``cofabric decode`` and ``serve`` (and ``analysis.model_config`` raised
it), where a system file so broken is a one-line error naming the byte. Both now read through
one reader (``fabric._system.read_text``), which also drops a byte order mark in both (a
model file with one was 'not valid TOML' at line 1).
"""

import contextlib
import io

import pytest

from analysis import model_config
from analysis._cli import main
from fabric import SpecError

MODEL = """layers = 4
dense_layers = 1
hidden = 1024
routed_experts = 16
experts_per_token = 2
shared_experts = 1
expert_ffn = 512
dense_ffn = 2048
vocab = 32000
weight_bytes = 1.0
activation_bytes = 2.0
[attention]
type = "gqa"
heads = 8
kv_heads = 8
head_dim = 128
"""


def _cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, err.getvalue()


@pytest.mark.parametrize("raw, byte", [(b"\xff\xfe" + MODEL.encode(), 0),
                                       (b'name = "\xe9"\n' + MODEL.encode(), 8)])
@pytest.mark.parametrize("cmd", [["decode", "hgx-h200"],
                                 ["serve", "hgx-h200", "--isl", "64", "--osl", "8"]])
def test_a_model_file_that_is_not_utf8_is_one_line_naming_the_byte(tmp_path, raw, byte, cmd):
    path = tmp_path / "m.toml"
    path.write_bytes(raw)
    rc, err = _cli(cmd + ["--model", str(path)])
    assert rc == 2 and err.count("\n") == 1, err
    assert f"{path}: not UTF-8 text (byte {byte})" in err and "internal error" not in err
    with pytest.raises(SpecError, match=r"not UTF-8 text \(byte"):
        model_config(path)


def test_a_byte_order_mark_reads_as_the_same_model(tmp_path):
    plain, bom = tmp_path / "a.toml", tmp_path / "b.toml"
    plain.write_text(MODEL)
    bom.write_bytes(b"\xef\xbb\xbf" + MODEL.encode())
    a, b = model_config(plain), model_config(bom)
    assert (a.layers, a.hidden, a.attention) == (b.layers, b.hidden, b.attention)
