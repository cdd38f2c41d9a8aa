"""Session 30 (reader): the models' count check is the decode model's (``check_int``).

``analysis._models._positive_int`` was ``analysis._decode._check_int``'s twin (the same texts)
but refused a numpy int (``dataclasses.replace(m, layers=np.int64(3))``: TypeError) where every
decode and serving count takes one. One check now, in the lower module; a model keeps its
counts as Python ints, so a numpy int computes exactly as the int it equals.
"""
import dataclasses
import fractions

import numpy as np
import pytest

from analysis import _decode, _models
from analysis._models import model_config
from fabric import SpecError
from fabric._units import check_count


def test_one_count_check():
    # session 31: the packages' one count check is fabric._units.check_count (check_int gone)
    assert _decode.check_count is _models.check_count is check_count
    assert not hasattr(_models, "_positive_int") and not hasattr(_models, "check_int")


@pytest.mark.parametrize("field, value", [("layers", 7), ("dense_layers", 0), ("mtp_modules", 2),
                                          ("experts_per_token", 4)])
def test_a_numpy_int_field_is_the_int_it_equals(field, value):
    m = model_config("deepseek-v3")
    a = dataclasses.replace(m, **{field: value})
    b = dataclasses.replace(m, **{field: np.int64(value)})
    assert type(getattr(b, field)) is int
    assert a == b and a.weight_bytes_total == b.weight_bytes_total


def test_numpy_ints_in_the_attention_block_and_tp():
    m = model_config("deepseek-v3")
    att = dataclasses.replace(m.attention, heads=np.int32(64), q_lora_rank=np.uint16(0))
    assert att == dataclasses.replace(m.attention, heads=64, q_lora_rank=0)
    assert type(att.heads) is int and type(att.q_lora_rank) is int
    assert m.attention_params_per_rank(np.int64(4)) == m.attention_params_per_rank(4)


@pytest.mark.parametrize("value, error", [(2.0, TypeError), (True, TypeError), (np.True_, TypeError),
                                          ("8", TypeError), (0, SpecError), (np.int64(-1), SpecError)])
def test_other_values_are_refused_as_before(value, error):
    with pytest.raises(error, match="layers must be"):
        dataclasses.replace(model_config("deepseek-v3"), layers=value)


@pytest.mark.parametrize("field, value", [("activation_bytes", 2.0), ("kv_cache_bytes", 1.0),
                                          ("expert_weight_bytes", 0.5625)])
def test_a_numpy_byte_figure_is_the_float_it_equals(field, value):
    """The byte figures spelled the real test (int, float): np.float32(2.0) was refused as
    'must be a number'; they ask is_real and are stored as floats (session 30)."""
    m = model_config("deepseek-v3")
    a = dataclasses.replace(m, **{field: value})
    for v in (np.float32(value), np.float16(value), fractions.Fraction(value)):
        b = dataclasses.replace(m, **{field: v})
        assert type(getattr(b, field)) is float
        assert a == b and a.weight_bytes_total == b.weight_bytes_total
