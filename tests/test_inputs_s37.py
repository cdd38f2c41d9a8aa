"""Session 37 (inputs): bad input at public analysis functions a read of sessions 31-36's change
found unchecked (OLDER-B-4, -5, -6, -13, -15, -18), each now refused where it is read, by the
packages' one check of its kind (fabric._units: sequence_of, text_of, flag_of, check_count,
check_number, kind_error; fabric_arg).

Before: best_decode_layout('...', 'hgx-h200') raised AttributeError, tps=[0] ZeroDivisionError and
tps={8, 4} was tried in hash order; scaling_study('torus') read the letters t, o, r, u, s and a
misspelt router_limit family limited nothing; build_report(sections='structure') read letters;
parse_sizes refused a bare np.int64(4096) it read in a list, and took zero='yes' by its truth;
applicable_algorithms named cost's 'nbytes' and dropped a traffic matrix given for another
operation; plot_latency_cdf of a list raised AttributeError; Progress(width=2.5) failed at its
first draw and enabled='no' drew the bar; decode_step's kernel_floors and serving's speculative
settings quoted a 5,000-character value whole (OLDER-B-14: show_value).
"""

import numpy as np
import pytest
from degrade import built

import analysis
from analysis._sizes import parse_sizes
from fabric import SpecError

# -- best_decode_layout (OLDER-B-4) -----------------------------------------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    ({"f": "hgx-h200"}, TypeError, r"^f must be a fabric\.Fabric"),
    ({"tps": "8"}, TypeError, r"^tps must be a sequence of tensor-parallel sizes"),
    ({"tps": {8, 4}}, TypeError, r"^tps must be a sequence .*got \{4, 8\} \(a set\)"),
    ({"tps": [2.0]}, TypeError, r"^tps\[0\] must be a tensor-parallel size in \[1, 8\]"),
    ({"tps": [0]}, SpecError, r"^tps\[0\] must be a tensor-parallel size in \[1, 8\]"),
    ({"tps": [2, 3]}, SpecError, r"^tps\[1\] must divide the 8 chips used"),
    ({"ep": 9}, SpecError, r"^ep must be an integer number of chips in \[1, 8\], got ep=9$"),
], ids=["spec-str", "tps-str", "tps-set", "tps-float", "tps-0", "tps-3", "ep-9"])
def test_best_decode_layout_refuses_its_arguments_by_name(kwargs, error, match):
    f = kwargs.pop("f", None) or built("hgx-h200")
    with pytest.raises(error, match=match):
        analysis.best_decode_layout("deepseek-r1", f, batch=8, context=1024, **kwargs)


# -- scaling_study and build_report: sequences (OLDER-B-5) ------------------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    ({"families": "torus"}, TypeError, r"^families must be a sequence of .*, got 'torus'"),
    ({"families": {"torus", "hyperx"}}, TypeError, r"^families must be a sequence .*\(a set\)"),
    ({"families": [["torus"]]}, TypeError, r"^families\[0\] must be a str"),
    ({"sizes": 64}, TypeError, r"^sizes must be a sequence of chip counts, got 64"),
    ({"router_limit": 5}, TypeError, r"^router_limit must be a \(dict of .*, str\) pair"),
    ({"router_limit": ({"tors": 8}, "why")}, SpecError, r"^router_limit: unknown family 'tors'"),
    ({"router_limit": ({"torus": -1}, "why")}, SpecError, r"^router_limit\['torus'\] must be"),
], ids=["one-name", "set", "nested", "one-size", "limit-int", "limit-family", "limit-negative"])
def test_scaling_study_reads_sequences_and_its_router_limit(kwargs, error, match):
    args = {"families": ["torus"], "sizes": [64], "collective_limit": 0, "decode_limit": 0,
            **kwargs}
    with pytest.raises(error, match=match):
        analysis.scaling_study(**args)


@pytest.mark.parametrize("kwargs, match", [
    ({"sections": "structure"}, r"^sections must be a sequence of section names, got 'str"),
    ({"sections": [5]}, r"^sections\[0\] must be a str, got 5"),
    ({"systems": {"torus:2x2", "mesh:4"}}, r"^systems must be a sequence .*\(a set\)"),
    ({"systems": [["torus:2x2"]]}, r"^a system must be a preset name or spec string"),
], ids=["one-section", "section-int", "systems-set", "systems-nested"])
def test_build_report_reads_sequences(kwargs, match):
    args = {"systems": ["torus:2x2"], "sections": ["structure"], "quiet": True, **kwargs}
    with pytest.raises(TypeError, match=match):
        analysis.build_report(**args)


# -- parse_sizes: one number, one rule (OLDER-B-15) -------------------------------------------


def _outcome(values):
    try:
        return parse_sizes(values)
    except (TypeError, ValueError) as e:
        return type(e), str(e)


@pytest.mark.parametrize("value", [np.int64(4096), 4096.0, np.float32(4096), 5.5, True])
def test_a_bare_size_is_read_as_the_list_of_it(value):
    # 5.5 is not a whole number of bytes (a SpecError), True a bool (a TypeError), bare or not
    assert _outcome(value) == _outcome([value])
    assert _outcome(value) == [4096] or value in (5.5, True)


def test_parse_sizes_zero_is_a_flag():
    assert parse_sizes(0, zero=np.True_) == [0]
    with pytest.raises(TypeError, match=r"^zero must be True or False, got 'yes' \(a str\)"):
        parse_sizes(0, zero="yes")


# -- applicable_algorithms' traffic (OLDER-B-6) -----------------------------------------------


@pytest.mark.parametrize("op, traffic, match", [
    ("all-to-allv", np.ones((3, 3)), r"^all-to-allv takes .* as traffic, got an array of shape"),
    ("all-to-allv", None, r"^all-to-allv needs traffic= \(a traffic matrix, bytes, 8 x 8\)"),
    ("all-reduce", np.ones((8, 8)), r"^traffic= is an all-to-allv's matrix; all-reduce takes no"),
], ids=["shape", "missing", "other-op"])
def test_applicable_algorithms_names_its_own_traffic_argument(op, traffic, match):
    with pytest.raises(SpecError, match=match):
        analysis.applicable_algorithms(built("dgx-h100"), op, traffic=traffic)


# -- plots: a mapping of curves (OLDER-B-13) --------------------------------------------------


@pytest.mark.parametrize("value", [[1e-6, 2e-6], np.ones(3), None], ids=["list", "array", "None"])
@pytest.mark.parametrize("plot, name", [(analysis.plot_latency_cdf, "samples"),
                                        (analysis.plot_link_utilization, "utilization")],
                         ids=["latency-cdf", "link-utilization"])
def test_a_plot_of_curves_takes_a_mapping(plot, name, value):
    with pytest.raises(TypeError, match=rf"^{name} must be a mapping of label -> "):
        plot(value)


# -- Progress (OLDER-B-18) --------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    ({"width": 2.5}, TypeError, r"^width must be an integer >= 1, got width=2\.5"),
    ({"width": "x"}, TypeError, r"^width must be an integer >= 1"),
    ({"min_interval": "x"}, TypeError, r"^min_interval must be a finite number >= 0 seconds"),
    ({"min_interval": -1}, SpecError, r"^min_interval must be a finite number >= 0 seconds"),
    ({"live_interval": float("nan")}, SpecError, r"^live_interval must be a finite number > 0"),
    ({"live_interval": 0}, SpecError, r"^live_interval must be a finite number > 0"),
    ({"enabled": "no"}, TypeError, r"^enabled must be True, False or None, got 'no'"),
    ({"quiet": 1}, TypeError, r"^quiet must be True or False, got 1"),
    ({"live": None}, TypeError, r"^live must be True or False, got None"),
    ({"desc": 5}, TypeError, r"^desc must be a str, got 5"),
], ids=["width-float", "width-str", "min-str", "min-negative", "live-nan", "live-0",
        "enabled-str", "quiet-int", "live-None", "desc-int"])
def test_progress_checks_every_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        analysis.Progress(3, **kwargs)


# -- a long value quoted shortened (OLDER-B-14) -----------------------------------------------


@pytest.mark.parametrize("call", [
    lambda f: analysis.decode_step("deepseek-v3", f, batch=1, context=4,
                                   kernel_floors={"x" * 5000: 1e-6}),
    lambda f: analysis.serving_frontier("deepseek-v3", f, isl=1000, osl=100, batches=(4,),
                                        layouts=["tp=8"], speculative=(["x" * 5000],)),
], ids=["kernel-floors", "speculative"])
def test_a_long_value_is_quoted_shortened(call):
    # show_value's rule: both quoted the value whole (5,068 and 5,158 characters)
    with pytest.raises(SpecError, match=r"\(500\d characters\)") as info:
        call(built("hgx-h200"))
    assert len(str(info.value)) < 300, len(str(info.value))
