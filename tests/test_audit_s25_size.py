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

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fabric import (
    AddressMapError,
    AddressPlan,
    FabricError,
    RoutingError,
    TranslationError,
    Window,
    access_latencies,
    access_to,
)
from fabric._units import KiB
from tests.cli_run import run_cli
from tests.degrade import built, degrade

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
    # every chip pair: refused iff some chip's memory is smaller than the size
    if size > min(_capacity(f, c) for c in chips):
        with pytest.raises(AddressMapError, match="is larger than its memory"):
            access_latencies(f, op=op, size=size)
    else:
        try:
            access_latencies(f, op=op, size=size)
        except FabricError as e:                    # only a cut-off pair or a window refuses
            assert "larger than its memory" not in str(e)


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
