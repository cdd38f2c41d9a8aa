"""Audit, session 16: an exchange kernel that works within one load/store domain, asked to span
two, is a layout that does not apply, not a missing route.

Before: ``moe_exchange`` raised RoutingError for it (kernel 'one-sided' across the two servers of
``rail:servers=2,gpus=8,chip=h200``); serving reads a RoutingError as a pair of the instance's
chips with no path, found none, and stopped with "pricing layout tp=1,dp=16 found no route, but
every pair of its instance's chips has one (an internal inconsistency)": ``cofabric serve ...
--ep-kernel one-sided`` exited 2 with that line even when searching, where layouts inside one
server run. Now it is a NotApplicableError (a SpecError): serving skips such a layout with the
kernel's reason and keeps the others; a single layout asked for is refused with it.
"""

import pytest
from cli_run import run_cli as _cli

import analysis
import topologies
from analysis import NotApplicableError
from fabric import SpecError

SPEC = "rail:servers=2,gpus=8,chip=h200"
WHY = "kernel 'one-sided' works within one load/store domain, but the 16 EP ranks span 2"


def test_decode_refuses_the_kernel_across_domains_as_not_applicable():
    f = topologies.build(SPEC)
    with pytest.raises(NotApplicableError, match=WHY):
        analysis.decode_step("kimi-k2", f, batch=4, context=1024, layout="tp=4,dp=4,ep=16",
                             ep_kernel="one-sided")


def test_serving_point_names_the_kernel_not_an_internal_inconsistency():
    f = topologies.build(SPEC)
    with pytest.raises(SpecError, match=WHY):
        analysis.serving_point("kimi-k2", f, isl=1024, osl=128, batch=4,
                               layout="tp=4,dp=4,ep=16", ep_kernel="one-sided")


def test_serve_skips_the_layouts_that_span_servers_and_keeps_the_rest():
    rc, out, err = _cli(["serve", SPEC, "--model", "kimi-k2", "--isl", "1024", "--osl", "128",
                         "--ep-kernel", "one-sided", "--batches", "4", "--no-speculative",
                         "--quiet"])
    assert rc == 0, err
    assert "internal inconsistency" not in out + err
    skipped = [line for line in out.splitlines() if line.startswith("skipped ")]
    assert skipped and all(WHY in line for line in skipped)
    assert "single user:" in out


def test_serve_of_one_such_layout_is_one_line_exit_2():
    rc, out, err = _cli(["serve", SPEC, "--model", "kimi-k2", "--isl", "1024", "--osl", "128",
                         "--ep-kernel", "one-sided", "--layout", "tp=4,dp=4,ep=16", "--quiet"])
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and WHY in err
