"""Session 31 (reader): the last hand-spelled number, count and flag checks of the transports,
chips, runtimes' split tables, exchange kernels, weight formats and the report/table formatters
ask ``fabric._units.is_real`` / ``is_int`` / ``flag_of``.

The old spellings were ``isinstance(v, (int, float))`` (True read as 1 s by
``Transport``, numpy's numbers refused), ``isinstance(v, int)`` (True a 1-byte payload) and
``rule not in (0, 1, 2)`` (np.True_ read as split rule 1). Numpy's ints are counts and its bools
flags everywhere (lead's decisions, sessions 29-30); each record keeps what it is given as the
Python number it equals.
"""

import dataclasses
import fractions
import re
from types import SimpleNamespace

import numpy as np
import pytest
from source_trees import spelled

import analysis
from analysis._cli_report import processes_for_jobs
from analysis._json_units import with_units
from analysis._report_parts import fmt_value
from analysis._report_render import _is_numeric_column
from analysis._table import format_table
from fabric import SpecError, Transport, exchange_kernel, runtime
from fabric._chips import ChipSpec


@pytest.mark.parametrize("field, value, error, match", [
    ("nic_tx", True, TypeError, "nic_tx must be a finite number >= 0 seconds"),  # a kind (s32)
    ("completion", np.True_, TypeError, "completion must be a finite number >= 0 seconds"),
    ("max_payload", True, TypeError, "max_payload must be a positive int"),   # a count's kind
    ("max_payload", 0, SpecError, "max_payload must be a positive int"),
    ("header", True, TypeError, "header must be an int of bytes"),
    ("copy_bandwidth", True, TypeError, "copy_bandwidth must be a finite number > 0"),
    ("copy_bandwidth", float("inf"), SpecError, "copy_bandwidth must be a finite number > 0"),
    ("copy_bandwidth", "25GB/s", TypeError, "copy_bandwidth must be a finite number > 0"),
])
def test_a_transport_refuses_a_bool_as_a_time_or_a_count(field, value, error, match):
    with pytest.raises(error, match=match):
        Transport("t", "message", **{field: value})


def test_a_transport_keeps_numpy_numbers_as_the_python_ones_and_bounce_is_a_flag():
    t = Transport("t", "message", nic_tx=np.float16(1e-7), completion=fractions.Fraction(1, 10**6),
                  max_payload=np.uint8(200), header=np.int64(26), copy_bandwidth=np.float32(2e10),
                  bounce=np.True_)
    assert (type(t.max_payload), type(t.header), type(t.nic_tx), type(t.copy_bandwidth)) == (
        int, int, float, float)
    assert t.completion == 1e-6 and t.bounce is True
    assert t.wire_bytes(1000) == 1000 + 5 * 26          # 5 packets: no uint8 arithmetic
    with pytest.raises(TypeError, match="bounce must be True or False, got 'no'"):
        Transport("t", "message", bounce="no")
    with pytest.raises(TypeError, match="bounce must be True or False, got 'no'"):
        t.with_bounce("no")                              # was read as True


def test_a_chip_takes_numpy_figures_as_the_numbers_they_are():
    c = ChipSpec("x", 1, 2.0, 3.0, 1.0, "test", None, (("fp8", np.float32(6.0)),),
                 grace_gpus=np.int64(2))
    assert dict(c.tensor_flops) == {"bf16": 3.0, "fp8": 6.0} and c.grace_gpus == 2
    assert type(dict(c.tensor_flops)["fp8"]) is float and type(c.grace_gpus) is int
    with pytest.raises(TypeError, match="grace_gpus must be an integer"):
        ChipSpec("x", 1, 2.0, 3.0, 1.0, "test", grace_gpus=np.True_)


@pytest.mark.parametrize("index, bad", [(1, "80GB"), (1, 0), (2, True), (3, -3.0),
                                        (4, float("nan"))])
def test_a_chip_refuses_figures_of_the_wrong_kind_or_out_of_range(index, bad):
    figures = ["x", 1, 2.0, 3.0, 1.0, "test"]
    figures[index] = bad                 # were stored as given: '80GB' failed in a model
    field = ("hbm_bytes", "hbm_bandwidth", "peak_flops", "reduce_rate")[index - 1]
    # of the wrong kind a TypeError: hbm_bytes a count (check_count, session 31), the rest
    # numbers (session 32)
    error = TypeError if bad in ("80GB", True) else SpecError
    with pytest.raises(error, match=f"{field} must be .*chip 'x'|chip 'x': {field} must be"):
        ChipSpec(*figures)


@pytest.mark.parametrize("rule", [np.True_, True, 2.0, "1"])
def test_a_split_rule_is_an_int_not_a_flag_or_a_float(rule):
    # of the wrong kind a TypeError (STYLE's rule, session 32; was a SpecError)
    rt = runtime("nccl")
    with pytest.raises(TypeError, match=r"split rule must be 0, 1 or 2, got .* \(a "):
        dataclasses.replace(rt, name="hand-built", split={**rt.split, "rule": rule})
    # a numpy number in the table is the number it is
    dataclasses.replace(rt, name="hand-built", split={**rt.split, "rule": np.int64(2),
                                                      "min_traffic": np.float32(512)})


@pytest.mark.parametrize("change, error, named", [
    ({"min_traffic": "512"}, TypeError, r"'min_traffic' >= 1, got '512' \(a str\)"),
    ({"cell": True}, TypeError, r"'cell' >= 0, got True \(a bool\)"),
    ({"min_traffic": None}, SpecError, "'min_traffic' >= 1, got None"),
    ({"rule": 3}, SpecError, "split rule must be 0, 1 or 2, got 3$")])
def test_a_split_value_of_the_wrong_kind_is_a_type_error(change, error, named):
    rt = runtime("nccl")
    with pytest.raises(error, match=named) as e:
        dataclasses.replace(rt, name="hand-built", split={**rt.split, **change})
    assert type(e.value) is error
    with pytest.raises(SpecError, match="a split table needs its 'rule'"):
        dataclasses.replace(rt, name="hand-built", split={"min_traffic": 512})


def test_a_weight_format_takes_numpy_figures():
    w = analysis.WeightFormat("x", np.float32(4), np.int64(8), np.int64(16), "s", "fp4")
    assert w.bytes_per_weight == 0.5625 and type(w.group) is int and type(w.bits) is float


def test_an_exchange_kernel_takes_numpy_counts_and_flags_as_the_python_ones():
    k = exchange_kernel("deepep-low-latency")
    numpy = dataclasses.replace(k, forwarding=np.False_, qp_per_peer=np.uint8(k.qp_per_peer),
                                release_fence=tuple(np.bool_(x) for x in k.release_fence),
                                kernels=tuple(np.int64(x) for x in k.kernels),
                                staging_source_bytes=np.float16(0))
    assert numpy == k                  # the same kernel, each figure the Python one it equals
    assert [type(x) for x in (numpy.forwarding, numpy.qp_per_peer, *numpy.release_fence,
                              *numpy.kernels, numpy.staging_source_bytes)] == [
        bool, int, bool, bool, int, int, float]
    with pytest.raises(TypeError, match="forwarding must be True or False, got 1"):
        dataclasses.replace(k, forwarding=1)
    with pytest.raises(TypeError, match="message_header must be an int"):
        dataclasses.replace(k, message_header=np.True_)


@pytest.mark.parametrize("bad", [{"dedup": "node-ish"}, {"message_header": -1},
                                 {"kernels": (1,)}, {"sync_steps": (("hbm_load", 0),)},
                                 {"cycles": ()}, {"qp_per_peer": -2}])
def test_an_exchange_kernel_refuses_a_bad_figure_as_the_package_does(bad):
    # a SpecError, as the kernel's methods and every other fabric record raise (was a plain
    # ValueError: an except FabricError missed it); still a ValueError
    with pytest.raises(SpecError):
        dataclasses.replace(exchange_kernel("deepep-low-latency"), **bad)


def test_the_formatters_read_numpy_numbers_as_numbers():
    assert format_table(["n"], [[np.int64(7)], [12]]).splitlines()[2] == " 7"   # right-aligned
    assert fmt_value(np.int64(4096), "B") == "4KiB"
    assert fmt_value(np.float32(2e-6), "s") == "2us"
    assert with_units({"chips": np.int64(64)})["units"] == {"chips": "count"}
    assert _is_numeric_column(SimpleNamespace(key="n"), [{"n": np.int64(3)}, {"n": 0.5}])


def test_counts_of_the_sweep_and_report_helpers_are_ints_numpy_s_too():
    assert analysis.Progress(np.int64(3), quiet=True).total == 3
    assert analysis.sweep(lambda x: 2 * x, [{"x": 1}, {"x": 2}], chunksize=np.int64(1),
                          quiet=True) == [2, 4]
    with pytest.raises(TypeError, match="--jobs must be an integer >= 1, got --jobs=2.5"):
        processes_for_jobs(2.5)                          # was 2 processes


_NAME = r"([\w.\[\]]+)"
#: is_int spelled as Python's int and not a bool (numpy's ints refused)
_INT_AND_BOOL = re.compile(
    rf"isinstance\({_NAME}, bool\)\s+or\s+not\s+isinstance\(\1, int\)"
    rf"|not isinstance\({_NAME}, bool\)\s+and\s+isinstance\(\2, int\)"
    rf"|not isinstance\({_NAME}, int\)\s+or\s+isinstance\(\3, bool\)")


def test_no_package_module_spells_the_int_test_as_int_and_bool():
    assert spelled(_INT_AND_BOOL) == []
    for old in ("if isinstance(self.context, bool) or not isinstance(self.context, int) \\",
                "all(not isinstance(x, bool) and isinstance(x, int) for x in slots)",
                "if not isinstance(v, int) or isinstance(v, bool):"):
        assert _INT_AND_BOOL.search(old), old


def test_no_package_module_spells_a_number_test_as_int_or_float():
    assert spelled(r"isinstance\([^()]*, \((int, float|float, int)\)\)") == [
        "fabric/_units.py: isinstance(x, (int, float))"]      # is_real's fast path


def test_the_count_check_is_check_count_only():
    # session 31: analysis._models.check_int and analysis._serving._count were two more
    # spellings of one count check (a wrong kind a TypeError in one, a SpecError in the other)
    assert spelled(r"def (check_int|_positive_int|_check_int)\(|def _count\(name, value") == []
    assert spelled(r"def check_count\(") == ["fabric/_units.py: def check_count("]
