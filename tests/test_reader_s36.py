"""Session 36 (reader): each message says a bad value once and names what it may be.

A system file's size or address that parse_size / parse_address refuses said its value twice
("size = '12QB': cannot read size '12QB': unknown prefix 'Q'": the reader's 'key = value: '
before a sentence that quotes the value); now "size: " and their sentence. format_size's
``binary`` may be None (the default) but its refusal said 'must be True or False', and
moe_exchange's ``adaptive_routing`` refused a wrong kind with a SpecError: both through
flag_of(optional=True), the one flag check.
"""

import re

import pytest

import analysis
import fabric
import topologies

SYSTEM = """\
[system]
topology = "torus:2x2,chip=h100"

[[regions]]
name = "cxl.x"
base = "0x7f00_0000_0000"
size = {size}
owner = "host0"
kind = "dram"
"""


@pytest.mark.parametrize("size, said", [
    ('"12QB"', "size: cannot read size '12QB': unknown prefix 'Q'"),
    ("-1", "size: a size is >= 0 bytes, got -1"),
    ("1.5", "size: size must be a whole number of bytes, got 1.5"),
    ('"0x10"', "size: cannot read size '0x10': a size is decimal"),
], ids=["unit", "negative", "fraction", "hex"])
def test_a_system_file_says_a_refused_size_once(size, said):
    s = fabric.read_system(SYSTEM.format(size=size), "s.toml", build=topologies.build)
    (message,) = [x.message for x in fabric.check(s) if x.severity == "error"]
    assert message.startswith(said), message
    assert message.count(size.strip('"')) == 1, message


@pytest.mark.parametrize("value, shown", [(1, "1 (an int)"), ("no", "'no' (a str)")])
def test_format_size_names_none_among_binary_s_values(value, shown):
    with pytest.raises(TypeError, match=rf"^format_size: binary must be True, False or None, "
                                        rf"got {re.escape(shown)}$"):
        fabric.format_size(10**6, binary=value)
    assert fabric.format_size(10**6, binary=None) == "1MB"


@pytest.mark.parametrize("call, said", [
    (lambda v: fabric.Grid(v), "shape must be an integer or a sequence of integers, got "),
    (lambda v: analysis.parameter_grid(size=v),
     "axis 'size' must be a sequence of values, got "),
], ids=["grid-shape", "parameter-grid"])
def test_a_sequence_argument_of_the_wrong_kind_is_a_short_type_error(call, said):
    # was a SpecError / ValueError quoting the whole value ({x!r}: 5 KB for a long string);
    # show_value counts the quotes in its 5002 characters
    with pytest.raises(TypeError, match=rf"^{re.escape(said)}'4444.*\(5002 characters\) \(a str\)$"):
        call("4" * 5000)


def _choice_calls():
    f = topologies.build("torus:2x2")
    rows = [{"system": "s", "algorithm": "ring", "size": 1, "time": 1.0}]
    return {
        "grid-connect": lambda v: fabric.Grid((2, 2), connect=v),
        "hypermesh-connect": lambda v: topologies.hypermesh((2, 2), connect=v),
        "router-policy": lambda v: fabric.Router(f, policy=v),
        "router-ecmp": lambda v: fabric.Router(f, ecmp=v),
        "throughput-method": lambda v: analysis.throughput(f, None, method=v),
        "equalize-basis": lambda v: analysis.equalize(f, 1.0, basis=v),
        "plot-metric": lambda v: analysis.plot_collective_sweep(rows, metric=v),
        "export-fmt": lambda v: analysis.export_graph(f, "never-written.json", fmt=v),
    }


_CHOICES = ["grid-connect", "hypermesh-connect", "router-policy", "router-ecmp",
            "throughput-method", "equalize-basis", "plot-metric", "export-fmt"]


@pytest.mark.parametrize("name", _CHOICES)
def test_a_choice_of_the_wrong_kind_is_a_type_error(name):
    # a choice asks text_of first, then its set: 5 was 'must be one of ..., got 5' (a
    # ValueError or SpecError), Grid(connect=5) Python's "'int' object is not iterable"
    with pytest.raises(TypeError, match=r" must be a .*, got 5 \(an int\)$"):
        _choice_calls()[name](5)


@pytest.mark.parametrize("name", _CHOICES)
def test_a_long_unknown_choice_is_quoted_shortened(name):
    # {x!r} quoted a 5000-character name whole (5 KB lines)
    with pytest.raises(ValueError, match=r"must be .*, got .*\(5002 characters\)") as info:
        _choice_calls()[name]("x" * 5000)
    assert len(str(info.value)) < 200, len(str(info.value))


@pytest.mark.parametrize("token", ["1:" + "9" * 5000, "1KiB:4KiB:x" + "x" * 5000])
def test_a_long_size_token_is_quoted_shortened(token):
    # cofabric --sizes quoted a range token whole, twice (5-10 KB lines)
    with pytest.raises(fabric.SpecError, match=r"^size range '.*\(50\d\d characters\)") as info:
        analysis.parse_sizes([token])
    assert len(str(info.value)) < 300, len(str(info.value))


@pytest.mark.parametrize("values", [None, {4096}])    # (5.5 is read as [5.5]: session 37)
def test_sizes_that_are_no_token_or_sequence_are_a_type_error(values):
    # Python's "'NoneType' object is not iterable" named nothing
    with pytest.raises(TypeError, match=r"^sizes must be a sequence of sizes"):
        analysis.parse_sizes(values)


@pytest.mark.parametrize("draw", [
    lambda ax: analysis.plot_latency_cdf({"a": [1e-6]}, ax=ax),
    lambda ax: analysis.plot_link_utilization({"a": [0.5]}, ax=ax),
    lambda ax: analysis.draw_scaling([], "bisection_per_chip_Bps", ax=ax),
], ids=["latency-cdf", "link-utilization", "draw-scaling"])
def test_an_ax_that_is_no_axes_is_a_type_error(draw):
    # was Python's "'str' object has no attribute 'step'" (or 'plot'), naming no argument
    with pytest.raises(TypeError, match=r"^ax must be a matplotlib Axes or None .*, got 'x' "
                                        r"\(a str\)$"):
        draw("x")


def test_prefill_time_quotes_a_long_instance_shortened():
    f = topologies.build("hgx-b200")
    with pytest.raises(fabric.SpecError, match=r"not live chips of hgx-b200: \['x+\.\.\. "
                                               r"\(20016 characters\)") as info:
        analysis.prefill_time("deepseek-v3", f, isl=64, layout="tp=8", instance=["x" * 5000] * 8)
    assert len(str(info.value)) < 300      # was 20 KB: four names whole


def test_link_tech_refuses_what_is_no_name_as_chip_spec_does():
    # link_tech(None) was a SpecError 'unknown link technology None' (chip_spec's twin)
    for value, shown in ((None, "None (a NoneType)"), (5, "5 (an int)")):
        with pytest.raises(TypeError, match=r"^link technology must be a technology's name or "
                                            rf"a fabric\.LinkTech, got {re.escape(shown)}$"):
            fabric.link_tech(value)
    with pytest.raises(fabric.SpecError, match=r"\(5002 characters\); known: ") as info:
        fabric.link_tech("x" * 5000)
    assert len(str(info.value)) < 200            # was the 5000-character name whole


def test_host_link_reads_a_chip_by_name():
    # was "'str' object has no attribute 'grace_gpus'"
    from fabric._access import host_link
    assert [host_link(c) for c in ("gb200", "h200", "tpu-v4", None)] == [
        "nvlink-c2c", "pcie", None, None]
    with pytest.raises(TypeError, match="^chip must be a chip name or a fabric.ChipSpec"):
        host_link(5)


@pytest.mark.parametrize("argv", [
    ["latency", "torus:2x2", "--op", "x" * 5000],
    ["cost", "torus:2x2", "--op", "all-reduce", "--size", "1KiB", "--bogus", "x" * 5000],
], ids=["invalid-choice", "unrecognized"])
def test_argparse_refusing_a_long_argument_quotes_it_shortened(argv):
    # argparse quoted the argument whole: a 5 KB line (the CLI's one-line contract kept)
    from cli_run import run_cli
    rc, out, err = run_cli(argv)
    assert (rc, out, err.count("\n")) == (2, "", 1) and "... (500" in err, (rc, err[:200])
    assert len(err) < 200, len(err)


def test_speculative_decode_quotes_its_two_draft_prices_shortened():
    # a 5000-character draft_time was quoted whole beside draft_cost (a 5 KB line)
    f = topologies.build("torus:2x2,chip=h100")
    with pytest.raises(fabric.SpecError, match=r"^give exactly one of draft_time .* got "
                                               r"draft_time='x+\.\.\. \(5002 characters\), "
                                               r"draft_cost=1$"):
        analysis.speculative_decode("kimi-k2", f, draft_length=3, acceptance=0.7,
                                    draft_time="x" * 5000, draft_cost=1, batch=8, context=64,
                                    layout="tp=4")


def test_gemm_compute_efficiency_checks_its_choices_kind_first():
    # generation=5 was a SpecError 'must be one of ... got 5'; a long name came back whole
    # (None is a generation too: "a str or None", check_choice's optional=True, session 37)
    with pytest.raises(TypeError, match=r"^generation must be a str or None, got 5 \(an int\)$"):
        analysis.gemm_compute_efficiency(5, "fp8", "dense")
    with pytest.raises(TypeError, match=r"^GEMM kind must be a str, got 5 \(an int\)$"):
        analysis.gemm_compute_efficiency("hopper", "fp8", 5)
    with pytest.raises(fabric.SpecError, match=r"\(5002 characters\)$"):
        analysis.gemm_compute_efficiency("hopper", "fp8", "x" * 5000)
