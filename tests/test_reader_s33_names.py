"""Session 33 (reader): a record's name, source or choice of the wrong kind is a TypeError.

ChipSpec, WeightFormat, MoEModel, Runtime, ExchangeKernel, LinkTech, Transport, SymmetricHeap,
TrafficMatrix and Parameter kept ``name=5`` (a chip named 5 wrote Parameters '5.hbm_bytes', a
model file's ``name = 5`` printed "5 on dgx-h100"), and Runtime kept ``kind='x'``, which the
cost model priced as a one-sided runtime. Every label now goes through ``fabric._units.text_of``
(STYLE's rule: a wrong kind is a TypeError naming the field), a choice then through its set.
"""

import dataclasses
import pathlib

import numpy as np
import pytest
from cli_run import run_cli

import fabric
from analysis import TrafficMatrix, model_config
from analysis._models import WEIGHT_FORMATS
from fabric import SpecError, SymmetricHeap
from fabric._exchange import exchange_kernel
from fabric._tech import link_tech
from fabric._transport import transport

_RECORDS = {
    "chip": lambda: fabric.chip_spec("h100"),
    "format": lambda: WEIGHT_FORMATS["fp8"],
    "model": lambda: model_config("deepseek-r1"),
    "runtime": lambda: fabric.runtime("nccl"),
    "kernel": lambda: exchange_kernel("deepep-normal"),
    "tech": lambda: link_tech("nvlink4"),
    "transport": lambda: transport("rdma"),
    "heap": lambda: SymmetricHeap(4096),
    "traffic": lambda: TrafficMatrix("t", 2, fill=1.0),
    "parameter": lambda: fabric.Parameter("x.latency", 1e-6, "s", "assumption"),
}


@pytest.mark.parametrize("record, field, named", [
    ("chip", "name", "chip name"), ("chip", "source", "chip 'h100': source"),
    ("chip", "generation", "chip 'h100': generation"),
    ("format", "name", "weight format name"), ("format", "math", "weight format 'fp8': math"),
    ("model", "name", "model name"), ("model", "source", "model 'deepseek-r1': source"),
    ("model", "expert_format", "expert_format"),
    ("runtime", "name", "runtime name"), ("runtime", "kind", "runtime 'nccl': kind"),
    ("runtime", "version", "runtime 'nccl': version"),
    ("kernel", "name", "exchange kernel name"), ("kernel", "dedup", "dedup"),
    ("tech", "name", "link technology name"), ("tech", "carries", "carries"),
    ("transport", "name", "transport name"), ("transport", "kind", "kind"),
    ("heap", "name", "SymmetricHeap name"), ("traffic", "name", "name"),
    ("parameter", "name", "parameter name"), ("parameter", "unit", "parameter 'x.latency': unit"),
    ("parameter", "source", "parameter 'x.latency': source")])
def test_a_label_of_the_wrong_kind_is_a_type_error_naming_it(record, field, named):
    with pytest.raises(TypeError, match=rf"^{named} must be a str( or None)?, got 5 \(an int\)$"):
        dataclasses.replace(_RECORDS[record](), **{field: 5})


def test_a_runtime_kind_is_one_of_the_kinds_the_cost_model_prices():
    with pytest.raises(SpecError, match=r"^runtime 'ideal': kind must be one of ideal, library, one-sided, "
                                         r"got 'libary'$"):
        dataclasses.replace(fabric.runtime("ideal"), kind="libary")


def test_a_model_file_name_of_the_wrong_kind_is_one_line_exit_2(tmp_path):
    src = (pathlib.Path(__file__).parent / "data" / "model_small.toml").read_text()
    path = tmp_path / "m.toml"
    path.write_text(src.replace('name = "small"', "name = 5"))
    rc, out, err = run_cli(["decode", "dgx-h100", "--model", str(path), "--batch", "8"])
    assert (rc, out) == (2, "")
    assert err.strip().endswith("m.toml: model name must be a str, got 5 (an int)")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("build, value, kind", [
    (lambda v: dataclasses.replace(fabric.chip_spec("h100"), hbm_bandwidth=v), "3e12", "a str"),
    (lambda v: dataclasses.replace(transport("rdma"), software_post=v), True, "a bool"),
    (lambda v: dataclasses.replace(WEIGHT_FORMATS["fp8"], bits=v), None, "a NoneType"),
    (lambda v: fabric.format_time(v), True, "a bool"),
    # validate_address spelled the kind by hand: '(a object)' (review's S33-R1)
    (lambda v: fabric._address.validate_address(v, width=8), object(), "an object")])
def test_a_number_check_names_the_kind_it_refused(build, value, kind):
    # error_for's messages ended at the value; check_count's and check_number's name its
    # kind: one spelling now (fabric._units.kind_of)
    with pytest.raises(TypeError, match=rf"\({kind}\)$"):
        build(value)


@pytest.mark.parametrize("parse", [fabric.parse_size, fabric.parse_bandwidth, fabric.parse_time])
@pytest.mark.parametrize("value, error, says", [
    (np.True_, TypeError, r"got np.True_ \(a bool\)$"),       # was 1 byte, 1 B/s, 1 s
    (None, TypeError, r"got None \(a NoneType\)$"),   # Python's 'must be real number, not ...'
    (10**400, SpecError, "within a float's range")])          # a bare OverflowError
def test_a_quantity_given_as_a_number_is_a_real_number_a_float_holds(parse, value, error, says):
    with pytest.raises(error, match=says):
        parse(value)
