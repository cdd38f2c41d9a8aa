"""Audit, session 26: ``access_latencies`` refuses a plan only where a pair of its chips is.

``fabric.access_latencies`` (``cofabric latency``) times every ordered pair of DISTINCT chips;
it checks the address plan first (every requester's host must map every target). Until
session 26 it asked each host to map every chip of the set, its own requester's included, so
a host of one chip (or with one chip among ``chips=``) that maps every other chip but not its
own was refused, although no pair it times goes from that chip to its own memory:
``torus:2x2,chip=h100,hosts=1`` with a window of each host onto every other chip, where
``access_to`` times all 12 pairs, raised "host host0: no window of this domain maps global
address 0x0 (region 'chip0.hbm' of 'chip0')"; so did ``chips=`` over a degraded switch whose
host kept one chip. Found by the property below (a hunt of 1,000 draws: 3 such refusals).

The property: on random plans (default windows or not, windows onto whole or part of a chip's
memory, read-only or not) over intact and degraded fabrics, for a random set of chips, op,
size and transport, ``access_latencies`` times the pairs iff ``access_to`` times every ordered
pair, each at that access's ``slowest``, and refuses otherwise.
"""

import numpy as np
import pytest
from degrade import built, degrade
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fabric import AddressPlan, FabricError, Window, access_latencies, access_to

PAGE = 4096
SPECS = ["torus:2x2,chip=h100,hosts=1", "torus:2x2,chip=h100,hosts=2",
         "rail:servers=2,gpus=2,chip=h100", "torus:4x3,chip=h100,hosts=3",
         "fattree:k=4,chip=h100,hosts=2", "switch:4,chip=h100,hosts=2"]


def _windows(picks):
    return [Window(h, (1 << 44) + k * (1 << 40), target=t, size=n * PAGE, page_size=PAGE,
                   permissions=p, name=f"w{k}") for k, (h, t, n, p) in enumerate(picks)]


def _pairs(g, chips, **kw):
    """Brute force: ``{(a, b): slowest}`` of ``access_to`` over every ordered pair of distinct
    chips, or None where one of them is refused."""
    out = {}
    for a in chips:
        for b in chips:
            if a != b:
                try:
                    out[(a, b)] = access_to(g, a, b, **kw).slowest
                except FabricError:
                    return None
    return out


def _latencies(g, chips, **kw):
    try:
        s, d, lat = access_latencies(g, chips=chips, **kw)
    except FabricError:
        return None
    return {(chips[i], chips[j]): x for i, j, x in zip(s.tolist(), d.tolist(), lat.tolist(),
                                                       strict=True)}


def _same(got, want):
    assert (got is None) == (want is None), (got, want)
    if want is not None:
        assert set(got) == set(want)
        for k, t in want.items():
            assert np.isclose(got[k], t, rtol=1e-12, atol=0), (k, got[k], t)


def test_one_chip_hosts_mapping_every_other_chip_are_timed():
    f = built("torus:2x2,chip=h100,hosts=1")
    picks = [(h, c, 1, "rw") for h in f.domains for c in f.endpoints if c not in f.domains[h]]
    g = f.replace(address_plan=AddressPlan(default_windows=False, windows=_windows(picks),
                                           hbm_bytes=PAGE, layout="packed"))
    chips = list(g.endpoints)
    want = _pairs(g, chips)
    assert want is not None and len(want) == 12
    _same(_latencies(g, chips), want)               # refused on 9f3470b
    # still refused where a pair is: host0 loses its window onto chip1
    h = g.replace(address_plan=AddressPlan(default_windows=False, hbm_bytes=PAGE,
                                           layout="packed", windows=_windows(
                                               [p for p in picks if p[:2] != ("host0", "chip1")])))
    assert _pairs(h, chips) is None and _latencies(h, chips) is None


def test_a_host_with_one_chip_among_those_asked_need_not_map_it():
    f = built("switch:4,chip=h100,hosts=2")          # host0: chip0, chip1; host1: chip2, chip3
    picks = [("host0", "chip0", 1, "rw"), ("host0", "chip1", 1, "rw"),
             ("host0", "chip2", 1, "rw"), ("host1", "chip0", 1, "rw"), ("host1", "chip1", 1, "r")]
    g = f.replace(address_plan=AddressPlan(default_windows=False, windows=_windows(picks),
                                           hbm_bytes=PAGE, layout="packed"))
    for h in (g, g.without(chips=["chip3"])):
        chips = ["chip2", "chip0", "chip1"]
        want = _pairs(h, chips, op="load")
        assert want is not None
        _same(_latencies(h, chips, op="load"), want)      # refused on 9f3470b
        assert _pairs(h, chips, op="store") is None       # host1 may not store into chip1
        assert _latencies(h, chips, op="store") is None


@st.composite
def cases(draw):
    f = built(draw(st.sampled_from(SPECS)))
    pages = draw(st.integers(1, 4))
    hosts, chips = list(f.domains), list(f.endpoints)
    picks = draw(st.lists(st.tuples(st.sampled_from(hosts), st.sampled_from(chips),
                                    st.integers(1, pages), st.sampled_from(["r", "rw"])),
                          max_size=8))
    if draw(st.booleans()):             # each host maps a drawn set of chips, whole, rw
        picks = [(h, c, pages, "rw") for h in hosts
                 for c in draw(st.lists(st.sampled_from(chips), unique=True))] + picks[:2]
    plan = AddressPlan(default_windows=draw(st.booleans()), windows=_windows(picks),
                       hbm_bytes=pages * PAGE, layout="packed")
    g = draw(degrade(f.replace(address_plan=plan), max_links=2, max_chips=1))
    two_or_more = st.lists(st.sampled_from(list(g.endpoints)), min_size=2, max_size=5,
                          unique=True)
    kw = {"op": draw(st.sampled_from(["load", "store"])),
          "size": draw(st.sampled_from([1, 64, PAGE, PAGE + 1, pages * PAGE, pages * PAGE + 1])),
          "transport": draw(st.sampled_from(["loadstore", "native"]))}
    return g, draw(two_or_more), kw


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_latencies_are_timed_iff_every_pair_is_and_equal_its_access(case):
    g, chips, kw = case
    want = _pairs(g, chips, **kw)
    event("timed" if want is not None else "refused")
    _same(_latencies(g, chips, **kw), want)


@pytest.mark.parametrize("spec", SPECS)
def test_every_spec_keeps_two_chips_when_degraded(spec):
    # the strategy draws two chips of a degraded copy: one failed chip leaves at least three
    assert built(spec).n_endpoints >= 4
