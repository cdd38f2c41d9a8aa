"""A number written in text (a spec, a rank, a layout, a routing) is read only from ASCII
digits: ``int()`` and ``str.isdecimal`` also take other scripts' digits, fullwidth digits,
``+`` and ``_``, so ``torus:4\u0663`` built 43 chips (audit, session 15)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import decode_step
from analysis._moe_exchange import parse_routing
from fabric import NodeError, SpecError
from fabric._units import is_numeral

_ODD = ["4\u0663", "\uff13", "1_0", "+3", " 3", "3 ", "", "-", "--3", "3.0", "\u0663"]


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.from_regex(r"-?[0-9]{1,6}", fullmatch=True), st.text(max_size=6),
                      st.sampled_from(_ODD)))
def test_a_numeral_is_ascii_digits_after_an_optional_minus(text):
    # brute force over the characters: an optional '-', then one or more of '0'..'9'
    body = text.removeprefix("-")
    expected = bool(body) and all(c in "0123456789" for c in body)
    assert is_numeral(text) == expected
    if expected:
        assert int(text) == int(text.encode("ascii"))


@pytest.mark.parametrize("spec", ["torus:4\u0663", "torus:\uff13x4", "hypermesh:21_000",
                                  "torus:+3x4", "fattree:k=1_0", "switch:8,links=\u0663"])
def test_a_spec_with_a_numeral_that_is_not_ascii_digits_is_refused_by_name(spec):
    with pytest.raises(SpecError, match="must"):
        topologies.build(spec)


def test_ascii_specs_read_as_before():
    assert topologies.build("torus:4x4, links=2").n_endpoints == 16
    assert topologies.build("torus: 4x4").n_endpoints == 16
    with pytest.raises(SpecError, match=r"integer >= 1, got shape\[0\]=-3"):
        topologies.build("torus:-3x4")


def test_a_builder_given_a_string_count_reads_ascii_digits_only():
    assert topologies.torus(("4", 4)).n_endpoints == 16
    with pytest.raises(SpecError, match="integer"):
        topologies.torus(("\u0664", 4))


def test_a_rank_written_in_other_digits_is_not_a_rank():
    f = topologies.build("torus:3x3")
    assert f.node("3") == f.node("rank:3") == "chip3"
    with pytest.raises(NodeError, match="no node called"):
        f.node("\u0663")


def test_layout_and_routing_numbers_are_ascii_digits():
    f = topologies.build("dgx-h100")
    with pytest.raises(SpecError, match="layout: cannot read"):
        decode_step("kimi-k2", f, batch=1, context=1024, layout="tp=\u0668")
    assert parse_routing("node-limited:3") == ("node-limited", 3)
    with pytest.raises(SpecError, match="node-limited"):
        parse_routing("node-limited:\u0663")
