"""Audit session 32: hostile model files and models, as ``cofabric decode --model FILE`` reads them.

A fuzz of every field of a model file (560 files: 0, -1, 1e400, nan, inf, "8", true, 2.5,
[1], {a=1}, 2**63, 1e-300, 1e308, a date ...) through ``cofabric decode`` found three things:

- ``hypothetical`` took anything (``"no"``, ``1``, ``nan``, a list) and kept it as given:
  ``hypothetical = "no"`` was a hypothetical model. It is a flag (``fabric._units.flag_of``).
- Sizes or bytes per weight too large for a float: ``weight_bytes = 1e300`` made the weights'
  bytes ``inf - inf = nan``, which no memory check refuses (``nan > hbm`` is False), and
  decode_step answered ``inf`` seconds (at 1e308 the CLI then failed formatting it, exit 3);
  ``routed_experts = 10**300`` raised OverflowError. Both now a SpecError naming the cause.
- ``activation_bytes = 1e-5`` made a reduce-scatter of 0.57 bytes, which ``analysis.cost``
  refuses with a plain ValueError: the CLI reported a bug (exit 3). ``collective_seconds``,
  the one place decode, prefill and serving cost a collective, says what made it.

And a bad value the model's own checks refuse (``heads`` not a multiple of ``kv_heads``,
``experts_per_token > routed_experts``) did not name the file, as a TypeError's message did.
"""
import dataclasses
import re

import numpy as np
import pytest
from cli_run import run_cli

import topologies
from analysis import decode_step
from analysis._models import load_model_toml, model_config
from fabric import SpecError

_MODEL = """layers = 4
dense_layers = 1
hidden = 512
routed_experts = 8
experts_per_token = 2
shared_experts = 1
expert_ffn = 256
dense_ffn = 1024
vocab = 1000
{extra}
[attention]
type = "gqa"
heads = 8
kv_heads = 2
head_dim = 64
"""


def _file(tmp_path, extra):
    p = tmp_path / "m.toml"
    p.write_text(_MODEL.format(extra=extra))
    return str(p)


@pytest.mark.parametrize("value", ["no", 1, 0.0, float("nan"), None, (1,)])
def test_hypothetical_is_a_flag(value):
    with pytest.raises(TypeError, match=r"hypothetical must be True or False, got "):
        dataclasses.replace(model_config("deepseek-v3"), hypothetical=value)


def test_hypothetical_takes_a_numpy_bool_as_the_bool():
    m = dataclasses.replace(model_config("deepseek-v3"), hypothetical=np.True_)
    assert m.hypothetical is True


def test_a_model_file_with_a_text_hypothetical_is_one_line(tmp_path):
    path = _file(tmp_path, 'hypothetical = "no"')
    with pytest.raises(SpecError, match="hypothetical must be True or False, got 'no'"):
        load_model_toml(path)
    rc, out, err = run_cli(["decode", "switch:8,chip=h100", "--model", path])
    assert (rc, out, len(err.splitlines())) == (2, "", 1), err
    assert "hypothetical must be True or False" in err


@pytest.mark.parametrize("change", [{"weight_bytes": 1e300, "weight_format": None},
                                    {"expert_weight_bytes": 1e308},
                                    {"routed_experts": 10**300}, {"hidden": 10**305}])
def test_weights_too_large_for_a_float_are_named(change):
    with pytest.raises(SpecError, match="weights come to more bytes than a float holds"):
        dataclasses.replace(model_config("deepseek-v3"), **change)


def test_a_model_file_of_overflowing_weights_is_one_line(tmp_path):
    rc, out, err = run_cli(["decode", "switch:8,chip=h100", "--model",
                            _file(tmp_path, "weight_bytes = 1e308")])
    assert (rc, out, len(err.splitlines())) == (2, "", 1), err
    assert "more bytes than a float holds" in err


def test_a_message_of_less_than_one_byte_names_the_bytes_per_element(tmp_path):
    f = topologies.build("switch:8,chip=b200")
    m = dataclasses.replace(model_config("deepseek-v3"), activation_bytes=1e-5)
    with pytest.raises(SpecError, match=r"of 0\.\d+ bytes: a collective moves whole bytes.*"
                                        r"activation_bytes"):
        decode_step(m, f, batch=1, context=128)
    rc, out, err = run_cli(["decode", "switch:8,chip=h100", "--model",
                            _file(tmp_path, "activation_bytes = 1e-6")])
    assert (rc, out, len(err.splitlines())) == (2, "", 1), err
    assert "a collective moves whole bytes" in err


@pytest.mark.parametrize("old, new, words", [
    ("kv_heads = 2", "kv_heads = 3", "m.toml [attention]: heads must be a multiple of kv_heads"),
    ("experts_per_token = 2", "experts_per_token = 9",
     "m.toml: experts_per_token must be <= routed_experts")])
def test_a_bad_value_in_a_model_file_names_the_file(tmp_path, old, new, words):
    # a SpecError of the model's own checks named no file (a TypeError's did)
    p = tmp_path / "m.toml"
    p.write_text(_MODEL.format(extra="").replace(old, new))
    with pytest.raises(SpecError, match=re.escape(words)):
        load_model_toml(p)
