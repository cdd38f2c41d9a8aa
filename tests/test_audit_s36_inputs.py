"""Session 36 (audit): bad arguments that were answered wrongly or named nothing.

A spec string where a fabric is due gave Python's AttributeError at the public functions of
the modules ``fabric._fabric`` imports (``'str' object has no attribute 'graph'``): their
modules could not import the one check, ``fabric_arg``, without an import cycle. It now lives
in the leaf module ``fabric._fabric_arg``, which every module imports.
"""
import pytest

import fabric
from fabric import SymmetricHeap


@pytest.mark.parametrize("call", [
    lambda x: fabric.route(x, 0, 1),
    lambda x: fabric.route_many(x, [0], [1]),
    lambda x: fabric.Router(x),
    lambda x: fabric.loadstore_domains(x),
    lambda x: fabric.sends_messages(x),
    lambda x: fabric.loadstore_reaches(x, [0], [1]),
    lambda x: fabric.reach(x, 0, 1),
    lambda x: fabric.transports_for(x, "native", [0], [1]),
    lambda x: fabric.without(x, chips=[0]),
    lambda x: fabric.layout_regions(x),
    lambda x: fabric.heap_findings(SymmetricHeap(size=2**21), x, []),
], ids=["route", "route_many", "Router", "loadstore_domains", "sends_messages",
        "loadstore_reaches", "reach", "transports_for", "without", "layout_regions",
        "heap_findings"])
@pytest.mark.parametrize("value", ["torus:4x4", None])
def test_a_spec_where_a_fabric_is_due_says_what_builds_it(call, value):
    with pytest.raises(TypeError, match=r"^fabric must be a fabric\.Fabric \(topologies\.build "
                                        r"makes one from a spec or a preset's name\), got "):
        call(value)


@pytest.mark.parametrize("value", [None, 5, ["dgx-h100"], "spec"])
def test_rack_chips_of_no_fabric_is_refused(value):
    """rack_chips read ``getattr(f, 'assumptions', ())``: anything but a str (None, a list, a
    parsed spec) was a fabric stating no density, the book's 72 chips a rack, silently
    (review, session 36)."""
    import topologies
    if value == "spec":
        value = topologies.parse_spec("torus:4x4")
    with pytest.raises(TypeError, match=r"^f must be a fabric\.Fabric \(topologies\.build"):
        fabric.rack_chips(value)


@pytest.mark.parametrize("call, what", [
    (lambda m: fabric.chip_spec("b200").peak(m), "math format"),
    (lambda m: __import__("analysis").gemm_compute_efficiency("hopper", m, "dense"),
     "math format"),
    (lambda m: __import__("analysis").grouped_gemm_rate("b200", m, 96), "math format"),
    (lambda m: __import__("analysis").moe_module_time("b200", m, (7168, 2048, 256, 8), 1, 8,
                                                      16), "math format"),
    (lambda m: __import__("analysis").WeightFormat("w", 4, 0, 1, "s", math=m),
     "weight format 'w': math"),
], ids=["peak", "gemm_compute_efficiency", "grouped_gemm_rate", "moe_module_time",
        "WeightFormat"])
def test_a_math_format_is_checked_in_one_place(call, what):
    """The math format was checked in six places (analysis._gemm three times, ChipSpec.peak
    and tensor_flops, WeightFormat.math), now fabric._chips.check_math_format: a wrong kind
    is a TypeError (was a SpecError, 'got 5'), a long name is shortened (peak quoted 5,000
    characters whole)."""
    with pytest.raises(TypeError, match=f"^{what} must be a str, got 5 \\(an int\\)$"):
        call(5)
    with pytest.raises(fabric.SpecError, match=f"^{what} must be one of ") as info:
        call("x" * 5000)
    assert len(str(info.value)) < 200


def test_failure_cost_names_this_calls_failures_on_a_degraded_fabric():
    """The label was the degraded name less the fabric's; names count every failure since
    the build, so on a degraded fabric it read 'torus:4x4 without 2 links' whole (or 'and 1
    node' when the prefix happened to match)."""
    import topologies
    from analysis import failure_cost
    g = topologies.build("torus:4x4").without(links=[("chip0", "chip1")])
    assert failure_cost(g, links=[("chip2", "chip3")]).failure == "without 1 link"
    g2 = g.without(links=[("chip2", "chip3")])
    assert failure_cost(g2, chips=["chip8"]).failure == "without 1 node"
    assert failure_cost(g2).failure == "nothing"
