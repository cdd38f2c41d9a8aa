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


# -- the row plots' arguments (session 37's probe of every public analysis function) ----------

_ROWS = {
    "collective-sweep": [{"system": "a", "algorithm": "ring", "size": 1024, "time": 1e-5}],
    "ratio": [{"label": "a", "size": 1024, "ratio": 1.1}],
    "failure-cost": [{"system": "a", "failure": "one link", "change": 1.0}],
    "stacked-bars": [{"system": "a", "component": "gemm", "time": 1e-3}],
    "tornado": [{"parameter": "a", "low": "x0.5", "high": "x2", "value_low": 1e-3,
                 "value_high": 2e-3}],
    "scaling": [{"family": "torus", "chips": 64, "bisection_per_chip_Bps": 1e9}],
}
_PLOTS = {
    "collective-sweep": lambda rows, **kw: analysis.plot_collective_sweep(rows, **kw),
    "ratio": lambda rows, **kw: analysis.plot_ratio(rows, **kw),
    "failure-cost": lambda rows, **kw: analysis.plot_failure_cost(rows, **kw),
    "stacked-bars": lambda rows, **kw: analysis.plot_stacked_bars(rows, **kw),
    "tornado": lambda rows, **kw: analysis.plot_tornado(rows, kw.pop("base", 1.5e-3), **kw),
    "scaling": lambda rows, **kw: analysis.draw_scaling(
        rows, kw.pop("metric", "bisection_per_chip_Bps"), **kw),
}


@pytest.mark.parametrize("plot", sorted(_PLOTS))
@pytest.mark.parametrize("rows, error, match", [
    (5, TypeError, r"rows must be a sequence of rows \(dicts of key -> value\), got 5"),
    ([1], TypeError, r"rows\[0\] must be a dict of key -> value \(one row\), got 1 \(an int\)"),
], ids=["int", "row-int"])
def test_a_row_plot_takes_a_sequence_of_dict_rows(plot, rows, error, match):
    # was Python's "'int' object is not iterable" and "argument of type 'int' is not iterable"
    with pytest.raises(error, match=match):
        _PLOTS[plot](rows)


@pytest.mark.parametrize("plot, kwargs, error, match", [
    ("collective-sweep", {"group": "system"}, TypeError, r"^group must be a sequence of row"),
    ("ratio", {"group": "label"}, TypeError, r"^group must be a sequence of row keys"),
    ("ratio", {"group": [["label"]]}, TypeError, r"^group\[0\] must be a str"),
    ("ratio", {"reference": 0}, SpecError, r"^reference must be a finite number > 0"),
    ("ratio", {"reference_label": 5}, TypeError, r"^reference_label must be a str or None"),
    ("failure-cost", {"metric": ["change"]}, TypeError, r"^metric must be a str"),
    ("stacked-bars", {"category": ["system"]}, TypeError, r"^category must be a str"),
    ("stacked-bars", {"scale": "ms"}, TypeError, r"^scale must be a finite number > 0"),
    ("stacked-bars", {"scale": float("nan")}, SpecError, r"^scale must be a finite number > 0"),
    ("stacked-bars", {"unit_name": 5}, TypeError, r"^unit_name must be a str"),
    ("tornado", {"base": "1ms"}, TypeError, r"^base must be a finite number, got base='1ms'"),
    ("tornado", {"base": float("inf")}, SpecError, r"^base must be a finite number"),
    ("tornado", {"xlabel": None}, TypeError, r"^xlabel must be a str"),
    ("scaling", {"metric": "bisection"}, SpecError, r"^metric must be one of "),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_row_plots_keys_and_units_are_checked(plot, kwargs, error, match):
    # a set of keys was 'unhashable', a string 'unsupported operand', nan drew nothing, a key
    # given bare was read letter by letter, a metric no row holds a KeyError
    with pytest.raises(error, match=match):
        _PLOTS[plot](_ROWS[plot], **kwargs)


_VALUES = {"collective-sweep": ("time", "size"), "ratio": ("ratio", "size"),
           "failure-cost": ("change",), "stacked-bars": ("time",),
           "tornado": ("value_low", "value_high"),
           "scaling": ("chips", "bisection_per_chip_Bps")}


@pytest.mark.parametrize("plot, key", [(p, k) for p in sorted(_VALUES) for k in _VALUES[p]])
@pytest.mark.parametrize("value", ["1e-5", True], ids=["str", "bool"])
def test_a_row_plots_values_are_numbers(plot, key, value):
    # '1e-5' was "unsupported operand type(s) for /" (or numpy's 'isfinite' not supported),
    # True was drawn as 1
    rows = [{**_ROWS[plot][0], key: value}]
    with pytest.raises(TypeError, match=rf"rows\[0\]\['{key}'\] must be a number"):
        _PLOTS[plot](rows)


def test_a_missing_long_key_is_quoted_shortened():
    with pytest.raises(ValueError, match=r"row 0 lacks \['x.*\(500\d characters\)") as info:
        analysis.plot_failure_cost(_ROWS["failure-cost"], metric="x" * 5000)
    assert len(str(info.value)) < 300, len(str(info.value))      # was 10,077 characters


@pytest.mark.parametrize("sizes", [1024, None, {1024, 2048}], ids=["int", "None", "set"])
def test_cost_sizes_takes_a_sequence(sizes):
    with pytest.raises(TypeError, match=r"^sizes must be a sequence of sizes"):
        analysis.cost_sizes(built("dgx-h100"), "all-reduce", sizes)


# -- sweep and system_colors ------------------------------------------------------------------


@pytest.mark.parametrize("func, grid, match", [
    (5, {"p": [1]}, r"^func must be a callable, got 5 \(an int\)"),
    (lambda p: p, 5, r"^grid must be a sequence of points .*, got 5 \(an int\)"),
], ids=["func", "grid"])
def test_sweep_names_a_wrong_kind(func, grid, match):
    # was "'int' object is not callable" at the first point, and "'int' object is not iterable"
    with pytest.raises(TypeError, match=match):
        analysis.sweep(func, grid, quiet=True)


@pytest.mark.parametrize("systems", [5, "ab", {"a", "b"}, [5]], ids=["int", "str", "set", "item"])
def test_system_colors_takes_a_sequence_of_names(systems):
    # a set gave each system its colour by hash order, 'ab' read two systems 'a' and 'b'
    with pytest.raises(TypeError, match=r"^systems(\[0\])? must be a"), \
            analysis.system_colors(systems):
        pass
