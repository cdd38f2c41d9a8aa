"""Session 34 (reader): a wrong kind's TypeError names the value and its kind.

Eleven messages named only the type ('attention must be MLA or GQA, got dict', a system file's
'must be a string, got int'); three wrong kinds were SpecErrors (serving's chip, prefill and
point: STYLE's rule says TypeError). Every one now goes through ``fabric._units.kind_error``
(the value abbreviated by show_value, its kind by kind_of), and kind_of says 'an ndarray'.
Router.loads/loads_grouped read an array of bytes through fabric._arrays.real_array, and
Router.loads_matrix reads an int matrix a block at a time.
"""

import dataclasses
import uuid
from fractions import Fraction

import numpy as np
import pytest
from degrade import built

import analysis
import fabric
import topologies
from fabric._units import flag_of, kind_of, sequence_of


def _torus():
    return topologies.build("torus:4x4")


def test_kind_of_reads_nd_names_letter_by_letter():
    assert (kind_of(np.zeros(2)), kind_of(uuid.UUID(int=0)), kind_of(np.uint8(1))) == \
        ("an ndarray", "a UUID", "a uint8")


_CASES = {
    "structure": (lambda: _torus().replace(structure={"shape": (4, 4)}),
                  r"structure must be one of .* or None, got \{'shape': \(4, 4\)\} \(a dict\)$"),
    "failures": (lambda: _torus().replace(failures=[0]),
                 r"^failures must be a Failures, got \[0\] \(a list\)$"),
    "check": (lambda: fabric.check("torus:4x4"),
              r"^check\(\)'s system must be a fabric.Fabric or a fabric.System, got 'torus:4x4' "
              + r"\(a str\)$"),
    "graph": (lambda: fabric.validate_graph({"a": 1}),
              r"^a fabric graph must be a networkx.Graph, got \{'a': 1\} \(a dict\)$"),
    "attention": (lambda: dataclasses.replace(analysis.model_config("kimi-k2"),
                                              attention={"kv_heads": 8}),
                  r"^attention must be MLA or GQA, got \{'kv_heads': 8\} \(a dict\)$"),
    "layout": (lambda: analysis.parse_layout(4, 8),
               r"^layout must be a Layout, str, dict or None, got 4 \(an int\)$"),
    "grid point": (lambda: analysis.sweep(print, [{"x": 1}, 2], quiet=True),
                   r"^grid point 1 must be a mapping .*, got 2 \(an int\)$"),
    "executor": (lambda: analysis.sweep(print, [], executor="threads", quiet=True),
                 r"^executor must be a concurrent.futures.Executor, got 'threads' \(a str\)$"),
    # the flag and sequence checks named the value, not its kind
    "flag": (lambda: flag_of("no", "pdl"), r"^pdl must be True or False, got 'no' \(a str\)$"),
    "sequence": (lambda: sequence_of(4, "chips", "chip names or ranks"),
                 r"^chips must be a sequence of chip names or ranks, got 4 \(an int\)$"),
    # messages that named the value but not its kind (session 34, second piece)
    "params": (lambda: _torus().replace(params=None),
               r"^params must be a mapping of labels, got None \(a NoneType\)$"),
    "region": (lambda: fabric.Region(base="0", size=4096, owner="chip0", kind="hbm"),
               r"^Region base must be an int, got '0' \(a str\)$"),
    "window": (lambda: fabric.Window("host0", 1.5),
               r"^Window local_base must be an int, got 1.5 \(a float\)$"),
    "heap": (lambda: fabric.SymmetricHeap(4096.0),
             r"^SymmetricHeap size must be an int, got 4096.0 \(a float\)$"),
    "overlap": (lambda: analysis.cost(_torus(), "all-reduce", 1024, overlap=1),
                r"^overlap must be True or False, got 1 \(an int\)$"),
    # choices of the wrong kind: their kind first (text_of), then the set (SpecErrors before)
    "tier": (lambda: analysis.serving_cost(_torus(), tier=5),
             r"^tier must be a str, got 5 \(an int\)$"),
    "cost book": (lambda: fabric.hardware_costs(["street-2026"]),
                  r"^cost book must be a str, got \['street-2026'\] \(a list\)$"),
    "traffic name": (lambda: analysis.traffic(_torus(), 5),
                     r"^traffic name must be a str, got 5 \(an int\)$"),
    "traffic bytes": (lambda: analysis.traffic(_torus(), "all-to-all", "1KiB"),
                      r"^nbytes must be a finite number > 0, got nbytes='1KiB' \(a str\)$"),
    "op": (lambda: fabric.access_latencies(_torus(), op=None),
           r"^op must be a str, got None \(a NoneType\)$"),
    "transport": (lambda: fabric.access_latencies(_torus(), transport=1),
                  r"^transport must be a str, got 1 \(an int\)$"),
    # read by its truth, or refused by Python's own words
    "with_throughput": (lambda: analysis.failure_cost(_torus(), with_throughput="no"),
                        r"^with_throughput must be True or False, got 'no' \(a str\)$"),
    "seed": (lambda: analysis.ring_search(_torus(), seed="1"),
             r"^seed must be an integer >= 0, got seed='1' \(a str\)$"),
    # SpecErrors before (a wrong kind is a TypeError)
    "chip": (lambda: analysis.prefill_gemm_efficiency(5, "fp8", "experts"),
             r"^chip must be a chip name or a fabric.ChipSpec, got 5 \(an int\)$"),
    "prefill": (lambda: analysis.shared_weight_read(None, 0.02, 0.001, 1000),
                r"^prefill must be a PrefillTime .*, got None \(a NoneType\)$"),
    "point": (lambda: analysis.speed_limits({"breakdown": {}}),
              r"^point must be a ServingPoint .*, got \{'breakdown': \{\}\} \(a dict\)$"),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_a_wrong_kind_names_value_and_kind(case):
    call, match = _CASES[case]
    with pytest.raises(TypeError, match=match):
        call()


def test_system_file_names_value_and_kind():
    head = '[system]\ntopology = "dgx-h100"\n'
    for text, message in [
            (head + "[address]\nlayout = 5\n", "layout must be a str, got 5 (an int)"),
            ("windows = [5]\n" + head, "[windows] must be a table, got 5 (an int)"),
            (head + "[address]\nwidth = '57'\n",
             "width must be an integer, got '57' (a str)")]:
        assert [f.message for f in topologies.read_system(text).findings] == [message]


def test_router_byte_arrays_through_the_one_array_check():
    # fabric._arrays.real_array: a bool or complex array is named by what it holds (was
    # 'got array([...]) (an ndarray)'), Python numbers held as objects are their floats
    # (a list of Fractions was refused), as in traffic matrices and latencies
    r = built("torus:4x4").router
    assert np.array_equal(r.loads([0, 1], [2, 3], [Fraction(1, 2), 3]),
                          r.loads([0, 1], [2, 3], [0.5, 3.0]))
    with pytest.raises(TypeError, match=r"^nbytes must be bytes .*, got complex numbers: "):
        r.loads([0, 1], [2, 3], np.array([1 + 1j, 2]))


def test_an_int_traffic_matrix_is_read_in_float_blocks():
    # loads_matrix converted an int matrix whole to floats before its first block (one more
    # n x n array: benchmarks/bench_routing.py int_matrix, peak 406 -> 310 MiB at 4,096 ranks)
    from fabric._arrays import traffic_values

    m = np.ones((16, 16), dtype=np.int64) - np.eye(16, dtype=np.int64)
    assert traffic_values(m, 16, "matrix", "matrix", copy=False) is m
    for f in (built("torus:4x4"), built("fattree:k=4")):
        assert np.array_equal(f.router.loads_matrix(m), f.router.loads_matrix(m.astype(float)))
    m[3, 5] = -1
    with pytest.raises(fabric.SpecError, match=r"\(\[3, 5\] = -1.0\)$"):
        built("torus:4x4").router.loads_matrix(m)


_BIG = 10**5000         # repr() of it raises ValueError (Python's 4300-digit limit)
_HUGE = {
    "cost": lambda f: analysis.cost(f, "all-reduce", _BIG),
    "failure_cost": lambda f: analysis.failure_cost(f, nbytes=_BIG),
    "scale_links": lambda f: analysis.scale_links(f, bandwidth=_BIG),
    "bill_of_materials": lambda f: analysis.bill_of_materials(f, rack_chips_factor=_BIG),
    "loads_all_to_all": lambda f: f.router.loads_all_to_all(_BIG),
    "eager_pass_seconds": lambda f: analysis.eager_pass_seconds([1e-6, _BIG]),
    "chip": lambda f: dataclasses.replace(fabric.chip_spec("h100"), hbm_bandwidth=_BIG),
    # an array holding one (numpy keeps it as an object): astype(float)'s bare OverflowError
    "latency_stats": lambda f: fabric.latency_stats([_BIG, 1.0]),
    "loads_matrix": lambda f: f.router.loads_matrix([[0, _BIG] + [0] * 14] + [[0] * 16] * 15),
}


@pytest.mark.parametrize("case", list(_HUGE))
def test_a_huge_int_is_refused_by_name_not_by_repr(case):
    # each raised Python's 'Exceeds the limit (4300 digits) for integer string conversion' or
    # a bare OverflowError (float()), naming nothing; the value is now abbreviated (show_value)
    with pytest.raises(ValueError, match=r"1000000000\d*\.\.\. \(5001 digits\)"):
        _HUGE[case](_torus())


def test_unchecked_byte_counts_are_checked():
    # loads_all_to_all read True as 1 B and None with Python's float() text (bisection_bound's
    # nbytes: audit's, session 34)
    f = _torus()
    for bad in (True, None):
        with pytest.raises(TypeError, match=r"^nbytes must be a finite number >= 0 bytes, got "):
            f.router.loads_all_to_all(bad)
    with pytest.raises(ValueError, match=r"^nbytes must be a finite number >= 0 bytes, got "
                                         r"nbytes=1000000000"):
        f.router.loads([0], [1], _BIG)


def test_a_count_past_its_bound_is_shown_abbreviated():
    # check_count lets 10**300 through (a float holds it); the bound's own message printed all
    # 301 digits
    with pytest.raises(fabric.SpecError, match=r"^devices_per_process=1000000000\d*\.\.\. \(301 "):
        analysis.cost(_torus(), "all-reduce", 1024, devices_per_process=10**300)


def test_a_long_array_is_shown_with_its_length():
    # real_array cut the repr at 60 characters with no marker ({values!r:.60})
    with pytest.raises(TypeError, match=r"got booleans: array\(\[ True, .*\.\.\. \(\d+ characters\)$"):
        fabric.latency_stats(np.ones(100, dtype=bool))
