"""Audit, session 25: an access to a node's memory is no larger than that memory.

``fabric.access_to(f, src, target, size=N)`` (``cofabric route --size``) and
``fabric.access_latencies(f, size=N)`` (``cofabric latency --size``) time N bytes into a
target's memory from its first byte. Until session 25 they timed any N: a 1 TiB load into
an 80 GB HBM (tests/test_audit_s21_address.py timed 2**40 B to chip3 on purpose, to check
a numpy size), and past a window that maps only part of the target. The lead decided
(session 25) that such a transfer does not exist: access_to refuses a size above the
target's memory with an error naming the target, its size and the size asked; the CLI prints
one line and exits 2. access_to is :func:`fabric.access` to the target's first byte, so it
now keeps access's span rule too (one window permitting the operation maps every byte).

The property checks the rule against a brute force over the address map: the target's
memory is the run of 4 KiB pages from its first byte that ``lookup`` gives to the target at
consecutive offsets, and a window covers the bytes when its own range holds them; on small
plans (HBM of 1-12 pages, windows onto part of it) over intact and degraded fabrics.
"""

import dataclasses
import functools

import numpy as np
import pytest
from cli_run import run_cli
from degrade import built, degrade
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import topologies
from fabric import (
    AddressMapError,
    AddressPlan,
    Region,
    RoutingError,
    TranslationError,
    Window,
    access_latencies,
    access_to,
)
from fabric._units import KiB, MiB

PAGE = 4 * KiB
SPECS = ["torus:2x2,chip=h100,hosts=2", "rail:servers=2,gpus=2,chip=h100",
         "torus:4x3,chip=h100,hosts=3", "fattree:k=4,chip=h100"]


def _capacity(f, node):
    """Brute force: bytes of ``node``'s memory from its first byte, page by page."""
    amap = f.address_map
    first = amap.global_address(node, 0)
    n = 0
    while True:
        try:
            b = amap.lookup(first + n * PAGE)
        except AddressMapError:
            break
        if (b.owner, b.offset) != (node, n * PAGE):
            break
        n += 1
    return n * PAGE


def _plan(f, hbm, window):
    """``f`` with ``hbm`` bytes of HBM a chip; with ``window``, no default windows and one
    window of every host onto the first ``window`` bytes of every chip."""
    plan = dataclasses.replace(f.address_plan or AddressPlan(), hbm_bytes=hbm, layout="packed")
    if window is not None:
        plan = dataclasses.replace(plan, default_windows=False, windows=tuple(
            Window(h, (1 << 40) + k * (1 << 30), size=window, target=c, page_size=PAGE,
                   name=f"w{h}-{c}")
            for h in f.host_domains for k, c in enumerate(f.endpoints)))
    return f.replace(address_plan=plan)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(SPECS), st.integers(1, 12), st.sampled_from(["load", "store"]))
def test_access_to_refuses_a_size_iff_it_exceeds_the_targets_memory_or_window(data, spec,
                                                                              pages, op):
    hbm = pages * PAGE
    window = data.draw(st.one_of(st.none(), st.integers(1, pages).map(lambda k: k * PAGE)))
    f = data.draw(degrade(_plan(built(spec), hbm, window), max_links=2, max_chips=1))
    chips = list(f.endpoints)
    src, target = data.draw(st.sampled_from(chips)), data.draw(st.sampled_from(chips))
    size = data.draw(st.one_of(st.integers(1, hbm + 2 * PAGE),
                               st.sampled_from([hbm, hbm + 1, 2**40]
                                               + ([window, window + 1] if window else []))))
    held = _capacity(f, target)
    assert held == hbm                              # the plan gives every chip its pages
    if size > held:
        event("larger than the memory")
        with pytest.raises(AddressMapError, match=rf"a {op} of {size} B .* to {target!r} is "
                           rf"larger than its memory, region .* of {held} B"):
            access_to(f, src, target, op=op, size=size)
    elif window is not None and size > window:
        event("past the window")
        with pytest.raises(TranslationError, match="runs past the end of window"):
            access_to(f, src, target, op=op, size=size)
    else:
        try:
            one = access_to(f, src, target, op=op)
        except RoutingError:                        # cut off by the failures: not about size
            event("cut off")
            with pytest.raises(RoutingError):
                access_to(f, src, target, op=op, size=size)
            return
        event("timed")
        a = access_to(f, src, target, op=op, size=size)
        assert (a.target, a.path, a.size) == (target, one.path, size)
    # every chip pair: refused iff some chip's memory is smaller than the size, or a window
    # of some host onto some chip (all of them alike here) is
    if size > min(_capacity(f, c) for c in chips):
        with pytest.raises(AddressMapError, match="is larger than its memory"):
            access_latencies(f, op=op, size=size)
    elif window is not None and size > window:
        with pytest.raises(TranslationError, match="runs past the end of window"):
            access_latencies(f, op=op, size=size)
    else:
        try:
            access_latencies(f, op=op, size=size)
        except RoutingError:                        # a pair cut off by the failures
            pass


def test_a_terabyte_into_an_80_GB_HBM_is_refused_at_the_command_line():
    # before: route timed it (171.8 s), latency too
    for argv in (["route", "rail:servers=2,gpus=2,chip=h100", "0", "3", "--size", "1TiB"],
                 ["latency", "rail:servers=2,gpus=2,chip=h100", "--size", "1TiB"]):
        status, out, err = run_cli(argv)
        assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, (argv, err)
        assert "1099511627776 B (1TiB)" in err and "larger than its memory" in err
        assert "80000000000 B (80GB)" in err
    status, out, _ = run_cli(["route", "rail:servers=2,gpus=2,chip=h100", "0", "3",
                                    "--size", "80GB"])
    assert status == 0 and "80GB" in out


def test_access_to_a_chip_through_a_window_onto_part_of_it_stops_at_the_windows_end():
    # before: 8 KiB + 1 B through host0's 8 KiB window onto chip3 was timed
    f = _plan(built(SPECS[0]), 8 * PAGE, 2 * PAGE)
    assert access_to(f, "chip0", "chip3", size=2 * PAGE).size == 2 * PAGE
    with pytest.raises(TranslationError, match="runs past the end of window 'whost0-chip3'"):
        access_to(f, "chip0", "chip3", size=2 * PAGE + 1)
    # and so for every pair at once (review S25-R1: latency timed it, max 1.022 us)
    assert len(access_latencies(f, size=2 * PAGE)[2]) == 12
    with pytest.raises(TranslationError, match="runs past the end of window 'whost0-chip"):
        access_latencies(f, size=2 * PAGE + 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["read", "write"]), st.integers(1, 3 * PAGE))
def test_a_domain_maps_a_span_iff_one_window_permitting_it_holds_every_byte(data, op, size):
    # HostDomain.maps(g, op, size): access_latencies' span rule, vectorized (review S25-R1)
    f = _example()
    host = data.draw(st.sampled_from(["host0", "host1"]))
    dom = f.host_domains[host]
    edges = sorted({e for w in dom.windows for e in (w.global_base, w.global_base + w.size)})
    g = [data.draw(st.sampled_from(edges)) + data.draw(st.integers(-2 * PAGE, 2 * PAGE))
         for _ in range(8)]
    g = [a for a in g if 0 <= a < 1 << f.address_map.width]

    def one(a):
        for w in dom.windows:
            if w.global_base <= a and a + size <= w.global_base + w.size:
                try:
                    dom.translate(a - w.global_base + w.local_base, op)
                    return True
                except (TranslationError, AddressMapError):
                    pass
        return False

    assert dom.maps(np.array(g, dtype=np.int64), op, size=size).tolist() == [one(a) for a in g]


@functools.cache
def _example():
    return topologies.load_system("examples/sd200-ultra.toml").fabric


def test_a_chip_whose_memory_is_interleaved_takes_one_granule_route_and_latency_alike():
    # the chips hold only shares of a 4 KiB-granule set: one access reaches one granule; before,
    # latency timed 4097 B for every pair while route refused it (and before s25 both timed it)
    f = built(SPECS[0]).replace(address_plan=AddressPlan(
        layout="explicit", host_memory=0, interleave=[Region(
            1 << 40, 4 * 256 * MiB, ("chip0", "chip1", "chip2", "chip3"), granularity=PAGE,
            name="pool")], windows=[Window(h, 1 << 44, target="pool", name="wp")
                                    for h in ("host0", "host1")]))
    assert access_to(f, "chip0", "chip1", size=PAGE).target == "chip1"
    assert len(access_latencies(f, size=PAGE)[2]) == 12
    for call in (lambda: access_to(f, "chip0", "chip1", size=PAGE + 1),
                 lambda: access_latencies(f, size=PAGE + 1)):
        with pytest.raises(AddressMapError, match=r"larger than a granule of its interleaved "
                           r"memory, region 'pool' .* \(4096 B\)"):
            call()


@pytest.mark.parametrize("size", [0, -1, True, 1.5, "4"])
def test_a_domain_refuses_a_span_of_no_positive_whole_bytes(size):
    # size=0 would have called the address one past a window's end mapped; a size of the
    # wrong kind is a TypeError (session 31)
    with pytest.raises(ValueError if type(size) is int else TypeError,
                       match="size must be a positive int of bytes"):
        _example().host_domains["host0"].maps(np.array([0]), size=size)
