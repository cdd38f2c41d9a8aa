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


def test_a_host_domain_whose_chips_all_failed_is_named_so():
    """fabric.without drops a host domain whose chips all failed; naming it then said "no
    node called 'host1'" (while one chip lived: "'host1' is a host domain, not a node")."""
    import topologies
    g = topologies.build("torus:3x3,hosts=3").without(chips=["chip3", "chip4", "chip5"])
    with pytest.raises(fabric.NodeError, match=r"'host1' is a host domain whose chips have all "
                                                r"failed \(chip3, chip4 and chip5\)$"):
        g.node("host1")


def test_a_fabric_degraded_in_two_calls_explains_an_island_as_one_call_does():
    """An island or a chip cut off by failures of two calls was explained by the second
    call's failures only: fattree:k=4's chip14 and chip15 after (link edge3.1-agg3.0,
    edge3.0) then agg3.1 read 'node agg3.1 failed', one call with all three also named the
    link (fabric._failures._bordering: every failed element next to the component)."""
    import topologies
    f = topologies.build("fattree:k=4")
    one = f.without(links=[("edge3.1", "agg3.0")], chips=["edge3.0", "agg3.1"])
    two = f.without(links=[("edge3.1", "agg3.0")], chips=["edge3.0"]).without(chips=["agg3.1"])
    want = ((("chip14", "chip15"), ("link edge3.1-agg3.0", "node agg3.1")),)
    assert one.failures.islands == two.failures.islands == want
    g = topologies.build("dragonfly:a=2,h=1")
    one = g.without(links=[("r0.0", "r1.0"), ("r0.0", "r0.1"), ("chip0", "r0.0")])
    two = g.without(links=[("r0.0", "r1.0"), ("r0.0", "r0.1")]).without(
        links=[("chip0", "r0.0")])
    assert dict(one.failures.cut_off) == dict(two.failures.cut_off) == {
        "chip0": ("link chip0-r0.0",)}


@pytest.mark.parametrize("plan", ["x", {}, 0])
def test_layout_regions_of_no_plan_is_refused(plan):
    """layout_regions(f, 'x') was "'str' object has no attribute 'layout'"; now the one plan
    check (fabric._plan.plan_arg, Fabric's address_plan and check() ask it too) (reader)."""
    import topologies
    f = topologies.build("torus:2x2,chip=h100")
    with pytest.raises(TypeError, match=r"^plan must be an AddressPlan or None, got "):
        fabric.layout_regions(f, plan)


@pytest.mark.parametrize("call, match", [
    (lambda f: fabric.Router(f, policy=__import__("numpy").array([1, 2])),
     r"^policy must be a str, got array"),
    (lambda f: fabric.Router(f, ecmp=5), r"^ecmp must be a str, got 5 \(an int\)$"),
    (lambda f: fabric.heap_findings("x", f, []), r"^heap must be a fabric\.SymmetricHeap, got "),
    (lambda f: __import__("analysis").failure_cost(f, label=__import__("numpy").array([1, 2])),
     r"^label must be a str or None, got array"),
], ids=["policy-array", "ecmp-int", "heap-str", "label-array"])
def test_a_wrong_kind_is_named(call, match):
    """An argument fuzz (each argument of 33 public calls given 'x', None, 5, 2.5, [], {}, an
    object, a numpy array, a tuple): numpy's 'truth value of an array ... is ambiguous' for
    Router's policy/ecmp and failure_cost's label, 'ecmp must be one of ..., got 5' for an
    int, "'str' object has no attribute 'where'" for heap_findings' heap."""
    import topologies
    with pytest.raises(TypeError, match=match):
        call(topologies.build("torus:2x2,chip=h100"))


@pytest.mark.parametrize("call", [
    lambda f: fabric.route_many(f, {"chip3", "chip1", "chip9"}, ["chip0", "chip2", "chip4"]),
    lambda f: fabric.route_many(f, {0: 1}, [1]),
    lambda f: fabric.access_latencies(f, chips={"chip0", "chip1"}),
    lambda f: f.without(chips={"chip3"}),
], ids=["route_many-set", "route_many-dict", "access_latencies-set", "without-set"])
def test_a_set_or_a_mapping_is_no_sequence(call):
    """fabric._units.items_of read any iterable: a set in its hashes' order (route_many paired
    sources with destinations differently under PYTHONHASHSEED=1, 2 and 4: hops [1 3 2],
    [1 1 2], [3 1 2]; access_latencies permuted its matrix), a mapping as its keys ({0: 1}
    routed 0, the value dropped). Lead's GO 20:31: a set or a mapping is not a sequence."""
    import topologies
    with pytest.raises(TypeError, match=r"must be a sequence of .*, got \{.*\} \(a (set|dict)\)$"):
        call(topologies.build("torus:4x4,chip=h100"))
