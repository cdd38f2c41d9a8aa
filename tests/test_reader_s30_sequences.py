"""Session 30 (reader): the serving model's sequence arguments read by fabric._units.items_of.

``analysis._serving`` spelled "a sequence or one value" four ways of its own (``hasattr(x,
'__iter__')`` beside a string test, ``list(x)`` in a try, ``sorted(set(x))``): bytes were read
byte by byte (``batches=b'\\x02'`` ran batch 2, ``input_lens=b'\\x01\\x02'`` ran lengths 1 and 2),
and a scalar or a 0-d array failed in Python's words ("'int' object is not iterable",
"iteration over a 0-d array") naming no parameter. One test, ``items_of``, now: bytes and a
0-d array are one value, refused by name where a sequence is due.
"""
import numpy as np
import pytest

import analysis
from analysis import _serving
from fabric import SpecError
from tests.degrade import built


def _frontier(**kw):
    kw.setdefault("layouts", ["tp=8"])
    return analysis.serving_frontier("deepseek-v3", built("hgx-b200"), isl=8, osl=8, **kw)


@pytest.mark.parametrize("value", [b"\x02", 2, 2.0, np.array(2), [[1]], "2"],
                         ids=["bytes", "int", "float", "0-d", "nested", "str"])
def test_batches_must_be_a_sequence_of_ints(value):
    if isinstance(value, list):      # a sequence whose batch is of the wrong kind (session 31)
        with pytest.raises(TypeError, match=r"batches\[0\] must be an integer >= 1"):
            _frontier(batches=value)
        return
    # a wrong kind: a TypeError since session 36 (was a SpecError)
    with pytest.raises(TypeError, match="batches must be a sequence of integers >= 1, got "):
        _frontier(batches=value)


@pytest.mark.parametrize("value", [b"\x01\x02", "12", np.array(2), 2, None],
                         ids=["bytes", "str", "0-d", "int", "None"])
def test_lengths_must_be_a_sequence(value):
    with pytest.raises(TypeError, match="input_lens must be a sequence of integers >= 1"):
        _serving._lengths("input_lens", value)


def test_lengths_and_batches_take_any_sequence():
    for seq in ([1, 2], (1, 2), (x for x in (1, 2)), np.array([1, 2]), range(1, 3)):
        assert _serving._lengths("input_lens", seq) == [1, 2]
    assert (len(_frontier(batches=(b for b in (2, 1, 2))).points)
            == len(_frontier(batches=[1, 2]).points))


@pytest.mark.parametrize("kw, match", [
    ({"speculative": np.array(3)}, "speculative must be a sequence"),
    ({"layouts": np.array("tp=8")}, "layouts must be a sequence of layouts"),
    ({"layouts": b"tp=8"}, "layouts must be a sequence of layouts"),
])
def test_a_0d_array_or_bytes_is_one_value_refused_by_name(kw, match):
    with pytest.raises(TypeError, match=match):
        _frontier(**kw)


def test_instance_bytes_and_0d_arrays_are_one_value():
    f = built("hgx-b200")
    for value in (b"chip0", np.array("chip0")):
        with pytest.raises(SpecError, match=r"got 1; not live chips of hgx-b200"):
            analysis.prefill_time("deepseek-v3", f, isl=64, layout="tp=8", instance=value)
    chips = (c for c in f.endpoints[:8])
    assert (analysis.prefill_time("deepseek-v3", f, isl=64, layout="tp=8", instance=chips)
            == analysis.prefill_time("deepseek-v3", f, isl=64, layout="tp=8"))


def test_an_engine_is_checked_in_one_place_and_a_list_named():
    """The engine was checked four times (decode_step, step_kernel_lists, prefill_time,
    step_budget); decode_step's ``engine not in ENGINE_KERNELS`` (a dict) failed on a list in
    Python's words ('unhashable type'). One check, ``analysis._decode.check_engine``, now."""
    from analysis import _decode
    assert _serving.check_engine is _decode.check_engine
    # by check_choice since session 38: a list or tuple is a name of the wrong kind
    with pytest.raises(TypeError, match=r"^engine must be a str, got \['trtllm'\] \(a list\)$"):
        analysis.decode_step("deepseek-v3", built("hgx-b200"), batch=8, context=64,
                             engine=["trtllm"])
    with pytest.raises(TypeError, match=r"^engine must be a str or None, got \('vllm',\)"):
        analysis.prefill_time("deepseek-v3", built("hgx-b200"), isl=64, engine=("vllm",))
