"""Session 37: one choice check (fabric._units.check_choice) in place of ~23 hand-written
copies of "text_of, then the set", which differed in class (ValueError or SpecError), in the
spelling of the choices (a tuple's repr or joined) and in "got x" against "got name=x"."""

import dataclasses

import numpy as np
import pytest

import fabric
from fabric._chips import check_math_format
from fabric._units import check_choice, check_number
from topologies import build


def test_check_choice_one_sentence():
    assert check_choice("ring", "connect", ("full", "ring")) == "ring"
    assert check_choice("b", "x", {"b": 1}) == "b"                  # a mapping's keys
    assert check_choice(None, "generation", ("hopper",), optional=True) is None
    with pytest.raises(fabric.SpecError, match=r"^x must be one of a, b, got 'c'$"):
        check_choice("c", "x", ("a", "b"))
    with pytest.raises(fabric.SpecError, match=r"^x must be one of a, b or None, got 'c'$"):
        check_choice("c", "x", ("a", "b"), optional=True)
    # a set is listed sorted: the message does not follow its hashes
    with pytest.raises(fabric.SpecError, match=r"^x must be one of a, b, c, got 'd'$"):
        check_choice("d", "x", {"c", "a", "b"})
    # its kind first, text_of's TypeError; a long value abbreviated
    with pytest.raises(TypeError, match=r"^x must be a str, got \['a'\] \(a list\)$"):
        check_choice(["a"], "x", ("a",))
    with pytest.raises(fabric.SpecError, match=r"got 'aaaa.*\(500 characters\)$"):
        check_choice("a" * 498, "x", ("a",))


def test_fabric_choices_one_class_and_sentence():
    f = build("torus:4x4")
    # Router's were ValueErrors (the rest of fabric's SpecErrors)
    for kw in ({"policy": "nope"}, {"ecmp": "nope"}):
        with pytest.raises(fabric.SpecError, match=rf"^{next(iter(kw))} must be one of .*, "
                                                   r"got 'nope'$"):
            fabric.Router(f, **kw)
    # a transport's kind said "'memory' or 'message'" and quoted the value whole
    with pytest.raises(fabric.SpecError, match=r"^kind must be one of memory, message, got "
                                               r"'xxx.*\(202 characters\)$"):
        dataclasses.replace(fabric.transport("rdma"), kind="x" * 200)


def test_chip_and_runtime_choices_joined():
    # a tuple's repr ("one of ('bf16', 'fp8', ...)") and "'hopper', 'blackwell' or None" were
    # two more spellings of the one sentence
    with pytest.raises(fabric.SpecError, match=r"^math format must be one of bf16, fp8, fp4, "
                                               r"int8, got 'fp16'$"):
        check_math_format("fp16")
    with pytest.raises(fabric.SpecError, match=r"^chip 'h100': generation must be one of "
                                               r"hopper, blackwell or None, got 'volta'$"):
        dataclasses.replace(fabric.chip_spec("h100"), generation="volta")


def test_address_choices_kind_first():
    # 'op' and 'unmapped' were asked by `in` alone: an array raised numpy's "truth value ...
    # ambiguous", 5 a ValueError; now a TypeError, and a wrong name check_choice's SpecError
    f = build("torus:2x2,chip=h100")
    with pytest.raises(TypeError, match=r"^op must be a str, got 5 \(an int\)$"):
        f.translate("host0", 0, op=5)
    with pytest.raises(fabric.SpecError, match=r"^op must be one of read, write, got 'rw'$"):
        f.translate_many("host0", [0], op="rw")
    with pytest.raises(fabric.SpecError,
                       match=r"^unmapped must be one of raise, mask, got 'x'$"):
        f.translate_many("host0", [0], unmapped="x")
    with pytest.raises(TypeError, match=r"^unmapped must be a str, got array"):
        f.address_map.lookup_many(np.array([0]), unmapped=np.array([1, 2]))


def test_fabric_numbers_by_check_number():
    # "a finite time >= 0 in seconds, got -1", "chip 'h100': hbm_bandwidth must be a positive
    # finite B/s, got 0": check_number's test and error_for written out with their own words
    with pytest.raises(fabric.SpecError, match=r"^nic_tx must be a finite number >= 0 seconds, "
                                               r"got nic_tx=-1$"):
        dataclasses.replace(fabric.transport("rdma"), nic_tx=-1)
    with pytest.raises(fabric.SpecError, match=r"^hbm_bandwidth must be a finite number > 0 B/s "
                                               r"\(chip 'h100'\), got hbm_bandwidth=0$"):
        dataclasses.replace(fabric.chip_spec("h100"), hbm_bandwidth=0)
    with pytest.raises(fabric.SpecError, match=r"^rows must be a number of rows >= 0, got "
                                               r"rows=nan$"):
        check_number("rows", float("nan"), rule="a number of rows >= 0")
