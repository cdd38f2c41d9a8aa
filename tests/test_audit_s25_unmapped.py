"""Audit, session 25: check() warns when a host maps none of its own chips.

With ``default_windows = false`` a host domain has only the windows its plan lists: no
apertures onto its own chips. A plan whose host lists none onto its own chips leaves them
unable to load or store one another's memory (``cofabric route`` on the example's tenant
partition: "no window of this domain maps ... chip1.hbm"), yet ``check()`` called it clean.
The lead decided (session 25) on a warning, not an error (a tenant may mean it), naming the
host: ``unreachable``, "host domain H maps none of its own chips' memory". Session 26 (lead's
decision) extends it to hosts of one chip (it cannot load or store its own memory either:
tests/test_audit_s26_one_chip.py); hosts mapping some of their chips stay unwarned.

The property checks the rule against a brute force over address ranges: a host is warned iff
it has a chip and none of its windows' global ranges meets a region one of its chips owns;
and then every access between two of its chips (or of its one chip to itself) is refused.
"""

from pathlib import Path

import pytest
from degrade import built, degrade
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from fabric import AddressPlan, TranslationError, Window, access, check, error_findings
from fabric._units import GiB

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sd200-ultra.toml"
SPECS = ["torus:2x2,chip=h100,hosts=2", "rail:servers=2,gpus=2,chip=h100",
         "torus:4x3,chip=h100,hosts=3", "torus:2x2,chip=h100,hosts=4",
         "torus:2x2,chip=h100,hosts=1"]


def _warned(findings):
    return sorted(f.where for f in findings if f.severity == "warning"
                  and "maps none of its own chips" in f.message)


def _partition(text):
    a, b = text.index("# --- tenant partition ---"), text.index("# --- end ---")
    block = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                      for line in text[a:b].splitlines()[1:])
    return text.replace("default_windows = true", "default_windows = false") + "\n" + block


def test_the_examples_tenant_partition_warns_for_every_host_and_has_no_error():
    # before: check() == [] while route 8 9 (host1's chips) was refused
    s = topologies.read_system(_partition(EXAMPLE.read_text()), "tenant.toml")
    found = check(s)
    assert error_findings(found) == []
    assert _warned(found) == sorted(s.fabric.domains) and len(found) == 16
    (w,) = [f for f in found if f.where == "host1"]
    assert w.code == "unreachable" and "host domain host1 maps none of its own chips" in \
        w.message and "'chip8'" in w.message
    with pytest.raises(TranslationError):
        access(s.fabric, "chip8", s.fabric.address_map.global_address("chip9", 0))


def test_one_window_onto_one_own_chip_is_enough_and_default_windows_never_warn():
    f = built("torus:2x2,chip=h100,hosts=2")
    host = f.host_of["chip0"]
    mate = next(c for c in f.domains[host] if c != "chip0")
    plan = AddressPlan(default_windows=False, windows=[
        Window(host, 1 << 44, target=mate, size=GiB, name="mate")])
    assert _warned(check(f.replace(address_plan=plan))) == sorted(set(f.domains) - {host})
    assert _warned(check(f)) == [] and _warned(check(topologies.load_system(EXAMPLE))) == []


def _brute(f, plan):
    """Hosts of 1+ chips no window of which (global range) meets a region of its chips
    (a host whose every chip has failed is gone: it makes no access, so it is not warned)."""
    amap = f.address_map
    out = []
    for h, chips in plan_domains(f):
        if not chips or h not in f.domains:
            continue
        regs = [r for r in amap.regions if set(r.owners) & set(chips)]
        wins = f.host_domains[h].windows
        if not any(w.global_base < r.end and r.base < w.global_base + w.size
                   for w in wins for r in regs):
            out.append(h)
    return sorted(out)


def plan_domains(f):
    """The host domains as placed (a degraded copy keeps the intact fabric's)."""
    plan = f.address_plan
    return list(plan.domains) if plan.domains is not None else list(f.domains.items())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(SPECS))
def test_a_host_is_warned_iff_no_window_of_it_meets_its_chips_memory(data, spec):
    f = built(spec)
    hosts, chips = list(f.domains), list(f.endpoints)
    owners = chips + [f"{h}.dram" for h in hosts]
    picks = data.draw(st.lists(st.tuples(st.sampled_from(hosts), st.sampled_from(owners)),
                               max_size=6, unique=True))
    plan = AddressPlan(default_windows=False, windows=[
        Window(h, (1 << 44) + k * (1 << 40), target=t, size=GiB, name=f"w{k}")
        for k, (h, t) in enumerate(picks)])
    g = data.draw(degrade(f.replace(address_plan=plan), max_links=1, max_chips=1))
    found = check(g)
    want = _brute(g, plan)
    assert _warned(found) == want
    # the plan is sound: only a failure's consequence is an error (review S25-R2: a failed
    # link that cuts chip3 off makes host0's window onto it unreachable)
    errors = error_findings(found)
    assert all(x.code == "unreachable" for x in errors) and (g.failures.degraded or not errors)
    for h in want:                          # and its live chips reach none of each other
        live = [c for c in dict(plan_domains(g))[h] if c in g.rank_of]
        for a in live:
            for b in live:
                with pytest.raises(TranslationError):
                    access(g, a, g.address_map.global_address(b, 0))
