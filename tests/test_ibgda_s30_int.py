"""Session 30 (R29-2, R30-1): the MoE exchange's files ask ``fabric._units.is_int`` (the one int
test), ``is_real`` (the one real-number test; behaviour identical) and ``items_of`` (the one "a
sequence or one value" test).

Behaviour is unchanged on ordinary values (Python's and numpy's ints and bools, floats, strings,
None, lists, tuples, generators, 1-d arrays); what changed: a registered
:class:`numbers.Integral` of another library is refused by name where ``numbers.Integral`` took
it on (``busiest_token`` answered for it, ``expected_max`` failed in ``**``), ``ep=b'\\x00\\x01'``
is refused where it was read as ranks 0 and 1, and a 0-d array or a list among ``sources`` is
refused by name where Python's own TypeError (iteration over a 0-d array, unhashable type) came out.
"""
import numbers
import pathlib

import numpy as np
import pytest
from degrade import built

import analysis
from analysis import _moe_exchange as M
from fabric import SpecError
from fabric import _exchange as X

_MODULES = ("fabric/_exchange.py", "analysis/_moe_exchange.py")


class _Registered:
    """An integer type of another library: a registered numbers.Integral, 3."""

    def __index__(self):
        return 3

    __int__ = __index__

    def __repr__(self):
        return "_Registered(3)"

    def __lt__(self, other):
        return 3 < other

    def __le__(self, other):
        return 3 <= other

    def __gt__(self, other):
        return 3 > other

    def __ge__(self, other):
        return 3 >= other

    def __mul__(self, other):
        return 3 * other

    __rmul__ = __mul__


numbers.Integral.register(_Registered)


def test_the_exchange_modules_spell_no_number_or_sequence_test_of_their_own():
    root = pathlib.Path(__file__).resolve().parent.parent
    found = [f"{name}:{i}" for name in _MODULES
             for i, line in enumerate((root / name).read_text().splitlines(), 1)
             if "numbers." in line or "__iter__" in line]
    assert found == []


_PPLX = X.exchange_kernel("pplx")

# every int test of the two modules, each called with one value where an int is due
_SITES = {
    "phase": (lambda v: X._phase_index(v), "phase must be"),
    "rank_counts": (lambda v: X.rank_counts([v, 1], 2), r"tokens\[0\] must be an int >= 0"),
    "lane_passes": (lambda v: X.lane_passes(v), "ep must be an int"),
    "receive_walk tokens": (lambda v: _PPLX.receive_walk(256, 8, v, 8), "tokens must be an int"),
    "receive_walk sources": (lambda v: _PPLX.receive_walk(256, 8, 2, 8, sources=v),
                             "sources must be an int"),
    "walk_wraps": (lambda v: _PPLX.walk_wraps(256, v), "ep must be an int"),
    "walk_sectors": (lambda v: _PPLX.walk_sectors(v), "walk_slots must be an int"),
    "parse_routing": (lambda v: M.parse_routing(v), "routing must be a name"),
    "expected_max": (lambda v: M.expected_max([0.5, 0.5], v), "n must be an int"),
    "busiest tokens": (lambda v: M.busiest_token(256, 8, 16, 1, "uniform", v),
                       "tokens must be an int"),
    "busiest sources": (lambda v: M.busiest_token(256, 8, 16, 1, "uniform", 2, v),
                        "sources must be an int"),
    "busiest k": (lambda v: M.busiest_token(256, v, 16, 1, "uniform", 2), "k must be an int"),
    "held sources": (lambda v: X.held_counts(1, 4, v), "sources must be an int from 1"),
    "held positions": (lambda v: X.held_counts(1, 4, [v]), r"sources\[0\] must be a position"),
}


@pytest.mark.parametrize("site", list(_SITES))
def test_a_registered_integral_is_refused_by_name(site):
    call, match = _SITES[site]
    with pytest.raises(_wrong_kind(site), match=match):
        call(_Registered())


#: Sites that check through fabric._units.check_count: a count of the wrong kind is a
#: TypeError there (lead's session 31 rule), a SpecError/ValueError at the others (as before)
_CHECK_COUNT = {"busiest k", "phase", "lane_passes", "walk_wraps", "walk_sectors",
                "rank_counts", "receive_walk tokens", "receive_walk sources", "expected_max",
                "busiest tokens", "busiest sources", "held sources", "held positions",
                "parse_routing"}


def _wrong_kind(site):
    return TypeError if site in _CHECK_COUNT else (SpecError, ValueError)


@pytest.mark.parametrize("site", list(_SITES))
def test_numpy_ints_answer_as_python_ints_and_bools_stay_refused(site):
    call, match = _SITES[site]
    value = 0 if site in ("phase", "held positions") else 3
    assert np.asarray(call(np.int64(value))).tolist() == np.asarray(call(value)).tolist()
    for flag in (True, np.True_):
        with pytest.raises(_wrong_kind(site), match=match):
            call(flag)


def test_ep_as_bytes_or_a_0d_array_is_refused_by_name_not_read_as_ranks():
    f = built("nvl72")
    assert M._resolve_ep(f, [0, 1]).tolist() == [0, 1]
    assert M._resolve_ep(f, np.int64(2)).tolist() == [0, 1]
    for bad in (b"\x00\x01", np.array(2), "01", _Registered()):
        with pytest.raises(TypeError, match="ep must be an int or a sequence of ranks"):
            M._resolve_ep(f, bad)


@pytest.mark.parametrize("bad", [np.array(2), [[0, 1]], [np.array([0, 1])], b"\x00\x01", "01"])
def test_sources_that_are_no_positions_are_refused_by_name(bad):
    with pytest.raises(TypeError, match=r"sources(\[0\] must be a position 0\.\.3| must be an "
                                        r"int from 1 to the 4 EP ranks)"):
        X.held_counts(1, 4, bad)


def test_moe_exchange_refuses_them_by_name_too():
    f = built("nvl72")
    kw = {"kernel": "pplx", "dispatch_bytes": 1, "combine_bytes": 2}
    with pytest.raises(TypeError, match="ep must be an int or a sequence"):
        analysis.moe_exchange(f, "deepseek-v3", 2, b"\x00\x01", **kw)
    with pytest.raises(TypeError, match="tokens_per_rank must be an int >= 1"):
        analysis.moe_exchange(f, "deepseek-v3", _Registered(), 8, **kw)
    with pytest.raises(TypeError, match="sources must be an int from 1"):
        analysis.moe_exchange(f, "deepseek-v3", 2, 4, sources=np.array(2), **kw)


@pytest.mark.parametrize("flag", ["adaptive_routing", "l2_flushed"])
def test_numpy_bools_are_flags_and_anything_else_is_refused(flag):
    """Review S30-R3 (lead's 05:01 decision: numpy's bools are flags everywhere): np.True_ and
    np.False_ give the Python bool's answer; 1, 'no' and a 0-d array stay refused by name."""
    f = built("dgx-h100")
    kw = {"kernel": "deepep-low-latency", "dispatch_bytes": 1, "combine_bytes": 2}

    def call(v):
        r = analysis.moe_exchange(f, "deepseek-v3", 2, 8, **kw, **{flag: v})
        return r.dispatch, r.combine

    assert call(np.True_) == call(True) and call(np.False_) == call(False)
    for bad in (1, "no", np.array(True)):
        with pytest.raises((SpecError, TypeError), match=f"{flag} must be True(,| or) False"):
            call(bad)
