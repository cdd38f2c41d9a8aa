"""Session 38: one sentence for each rule of the error texts (session 37's whole-diff read,
F7-F11, and the older reads' lists): a choice's refusal (``choice_fault``, which
``check_choice`` raises and a plan's or a file's list of faults holds), the engine check by
``check_choice``, ``check_interleave``'s kind by ``check_count``."""

import pytest

import fabric
from topologies import build


def test_a_list_of_faults_spells_a_choice_as_check_choice_raises_it():
    from fabric._domains import DomainLimits, limits_problems
    from fabric._plan import plan_errors
    from fabric._units import check_choice, choice_fault

    said = "layout must be one of owner-bits, packed, explicit, got 'owner_bits'"
    assert choice_fault("owner_bits", "layout", ("owner-bits", "packed", "explicit")) == said
    with pytest.raises(fabric.SpecError, match=f"^{said}$"):
        check_choice("owner_bits", "layout", ("owner-bits", "packed", "explicit"))
    # a plan's layout was "one of ('owner-bits', ...), got layout='owner_bits'"
    f = build("torus:2x2")
    assert said in plan_errors(f, f.plan.replace(layout="owner_bits"))
    # 'unset': a file's key left out ("one of ('size', 'page') or unset")
    assert limits_problems(DomainLimits(alignment="bytes")) == [
        "alignment must be one of size, page or unset, got 'bytes'"]


def test_the_engine_is_checked_by_check_choice():
    from analysis._decode import check_engine
    # a list was a SpecError quoting a list's repr: "one of ['sglang', 'trtllm', 'vllm']"
    with pytest.raises(TypeError, match=r"^engine must be a str, got \['vllm'\] \(a list\)$"):
        check_engine(["vllm"])
    with pytest.raises(fabric.SpecError,
                       match=r"^engine must be one of sglang, trtllm, vllm or None, got 'tgi'$"):
        check_engine("tgi", none_ok=True)


def test_interleave_kind_by_check_count():
    from fabric._address import check_interleave
    # the TypeError by check_count (was written out by hand, "got ways=2.0")
    with pytest.raises(TypeError, match=r"^interleave ways must be one of 1, 2, 4, 8, 16, 3, "
                                        r"6, 12, got interleave ways=2\.0 \(a float\)$"):
        check_interleave(2.0, 256)
    with pytest.raises(fabric.AddressMapError, match=r"^interleave granularity must be a power "
                                                     r"of two from 256 B to 16 KiB, got "
                                                     r"interleave granularity=384$"):
        check_interleave(2, 384)


def test_a_lookup_by_name_says_one_sentence():
    import analysis
    from analysis._decode import parse_layout
    from fabric._units import lookup, unknown_fault
    assert lookup({"a": 1}, "a", "x") == 1
    with pytest.raises(TypeError, match=r"^x must be a str, got 5 \(an int\)$"):
        lookup({"a": 1}, 5, "x")
    assert unknown_fault("z", "x", ()) == "unknown x 'z'; known: none"
    # in order before (all-to-all, permutation, shift, hotspot, moe); a list's repr before
    with pytest.raises(fabric.SpecError, match=r"^unknown traffic 'tornado'; known: all-to-all, "
                                               r"hotspot, moe, permutation, shift$"):
        analysis.traffic(4, "tornado")
    with pytest.raises(fabric.SpecError, match=r"^layout: unknown keys \['pp'\]; known: dp, ep, "
                                               r"etp, tp$"):
        parse_layout({"pp": 2, "tp": 2}, 8)
    # the cycle count's name was read before its kind: a list was 'unhashable type'
    with pytest.raises(TypeError, match=r"^cycle count must be a str, got \[\] \(a list\)$"):
        fabric.exchange_kernel("pplx").cycle([], 0)
    # transport() and transport_arg(): one sentence, native named where it is taken
    from fabric._transport import transport_arg
    with pytest.raises(fabric.SpecError, match=r"^unknown transport 'tcp'; known: loadstore, "
                                               r"rdma, or native \(each step"):
        transport_arg("tcp")


def test_lookups_are_not_written_again():
    """A guard: the sentence of a lookup by name ('unknown x; known: ...') was written at ~20
    sites (known names in order or sorted, a list's repr or joined, 'known' or 'allowed');
    fabric._units.unknown_fault is its one place."""
    from source_trees import spelled
    assert [s for s in spelled(r"\"[^\"\n]*; (?:known|allowed|options): ")
            if not s.startswith(("fabric/_units.py", "fabric/_errors.py"))] == []


def test_an_owner_without_its_own_region_is_said_one_way():
    from fabric import AddressMap, Region
    gib = 2**30
    amap = AddressMap([Region(0, gib, "c", name="c-a"), Region(gib, gib, "c", name="c-b"),
                       Region(2 * gib, gib, "d", kind="dram", name="d-a"),
                       Region(3 * gib, gib, "d", kind="dram", name="d-b")])
    # global_address said only "'c' owns 2 regions" where the windows and the heap named them
    with pytest.raises(fabric.AddressMapError, match=r"^'c' holds 2 HBM regions \('c-a' and "
                                                     r"'c-b'\) and none is named 'c\.hbm'; name "
                                                     r"one with region=$"):
        amap.global_address("c", 0)
    with pytest.raises(fabric.AddressMapError, match=r"^'d' holds 2 regions and no HBM region "
                                                     r"of its own; name one with region=$"):
        amap.global_address("d", 0)


def test_a_numbers_rule_is_derived_from_its_bounds():
    import inspect

    import analysis
    from fabric._units import check_number
    # rule= restated minimum and strict in words at four sites ("a finite number of bytes
    # > 0" beside minimum=0, strict=True); the words now come from them and the unit
    assert "rule" not in inspect.signature(check_number).parameters
    assert check_number("base", -1e300, None) == -1e300     # minimum=None: any finite number
    with pytest.raises(fabric.SpecError, match=r"^base must be a finite number, got base=nan$"):
        check_number("base", float("nan"), None)
    with pytest.raises(fabric.SpecError, match=r"^m must be a finite number >= 1 rows, got "
                                               r"m=0\.5$"):
        analysis.trtllm_gemm_time("b200", "bf16", 0.5, 7168, 2048)


def test_an_address_is_never_a_float():
    # OLDER-A-18 (lead, board 01:21): parse_address read 4096.0 as 4096 where validate_address
    # refused it; a system file's TOML float base was read below 2**53
    import topologies
    from fabric._address import validate_address
    for ask in (fabric.parse_address, validate_address):
        with pytest.raises(TypeError, match=r"got 4096\.0 \(a float\)$"):
            ask(4096.0)
    text = ('[system]\ntopology = "torus:2x2,chip=h100"\n\n[[regions]]\nbase = 4096.0\n'
            'size = "4KiB"\nowner = "chip0"\nkind = "mmio"\n')
    assert [x.message for x in fabric.check(topologies.read_system(text))
            if x.severity == "error"] == [
        "base must be an integer or a string such as '0x4000_0000', got 4096.0 (a float)"]


def test_a_fault_list_spells_its_choices_by_one_of():
    import networkx as nx

    from fabric import Fabric, GraphError, Region, region_findings
    # a region's kind and permissions were "is not one of ('hbm', 'dram', ...)" (a tuple's
    # repr), a graph node's kind "not one of ['chip', ...]" (a list's)
    (f,) = region_findings([Region(0, 2**30, "chip0", kind="flash", name="r")])
    assert f.message.endswith(": kind must be one of hbm, dram, mmio, storage, got 'flash'")
    g = nx.path_graph(2)
    nx.set_node_attributes(g, "toaster", "kind")
    nx.set_edge_attributes(g, 1e9, "bandwidth")
    nx.set_edge_attributes(g, 1e-6, "latency")
    with pytest.raises(GraphError, match=r"node 0 has kind 'toaster'; it must be one of chip, "
                                         r"host, memory, nic, switch"):
        Fabric.from_graph(g)


def test_choices_are_not_spelled_again():
    """A guard: a set of choices in a message is one_of's spelling (a tuple's or a list's
    repr, or joined by hand, at five sites until session 38)."""
    from source_trees import spelled
    assert [s for s in spelled(r"(?:must be|not|is not) one of \{")
            if not s.startswith("fabric/_units.py")] == []


def test_an_array_of_integers_is_checked_in_one_place():
    import numpy as np

    from fabric._arrays import integer_array
    f = build("torus:2x2,chip=h100")
    # four dtype checks, two sentences ('got dtype float64', 'got an array of dtype float64')
    asks = ((lambda a: f.node_indices(a, "src"), "src must be node indices \\(integers\\)"),
            (lambda a: f.router.loads_grouped([0], [1], 1.0, a, 2), "group must be integers"),
            (lambda a: f.address_map.lookup_many(a), "addresses must be integers"))
    for ask, what in asks:
        with pytest.raises(TypeError, match=f"^{what}, got an array of dtype float64$"):
            ask(np.array([1.0]))
    assert integer_array((), "x").dtype == np.int64


def test_a_collectives_size_is_checked_by_check_number():
    import analysis
    f = build("torus:2x2")
    # read_nbytes wrote check_number's test out and raised a plain ValueError (not the
    # project's own error, which the CLI reports as bad input)
    for bad, said in ((0.5, "at least 1 byte"), (float("nan"), "a finite number > 0 bytes")):
        with pytest.raises(fabric.SpecError, match=said):
            analysis.cost(f, "all-reduce", bad)
    assert analysis.cost(f, "all-reduce", 2**63 - 1).size == 2.0**63     # at the limit, taken


def test_a_schedule_and_a_spec_option_look_up_as_the_rest():
    import analysis
    from topologies import parse_spec
    # "unknown algorithm 'warp'; for all-gather use auto, ring, ..." and "unknown option
    # 'colour' for torus; options: ..." were their own sentences
    with pytest.raises(fabric.SpecError, match=r"^all-gather: unknown algorithm 'warp'; known: "
                                               r"auto, "):
        analysis.schedule("all-gather", "warp", 4)
    with pytest.raises(fabric.SpecError, match=r"^torus: unknown option 'colour'; known: "):
        parse_spec("torus:4x4,colour=red")


def test_the_readers_and_formatters_raise_the_packages_error():
    from fabric._units import format_size, format_time
    # plain ValueErrors beside every other parse_* refusal's SpecError (fabric/_errors: an
    # error raised on purpose about a value is a FabricError)
    for ask, value in ((fabric.parse_address, -5), (format_size, float("nan")),
                       (format_time, float("inf"))):
        with pytest.raises(fabric.SpecError):
            ask(value)


def test_a_ragged_sequence_is_named():
    import analysis
    f = build("torus:2x2,chip=h100")
    # numpy's "setting an array element with a sequence ... inhomogeneous shape", naming
    # nothing, where a sequence of numbers went (a plain ValueError: the CLI's 'a bug')
    for ask, what in ((lambda: f.address_map.lookup_many([[1, 2], [3]]), "address"),
                      (lambda: f.router.loads_grouped([0, 1], [1, 2], 1.0, [[0, 1], [1]], 2),
                       "group"),
                      (lambda: fabric.interleave_target([[0, 1], [2]], 2, 256),
                       "interleave offset"),
                      (lambda: analysis.link_loads(f, [[1, 2], [3]]), "matrix")):
        with pytest.raises(fabric.SpecError, match=f"^{what} must have rows of one length, "
                                                   "got rows of different lengths$"):
            ask()


def test_one_of_lists_any_choices_and_check_choice_takes_a_flag():
    from fabric._units import check_choice, one_of
    # wdr38 W-8: a set of mixed kinds was "'<' not supported", no choice "one of " dangling
    assert one_of({1, "a"}) == "one of 1, a" and one_of(()) == "one of none"
    # W-11: the file's word ('unset') leaked into check_choice: its optional is a flag
    with pytest.raises(TypeError, match=r"^optional must be True or False, got 'unset'"):
        check_choice("b", "x", ("a",), optional="unset")
