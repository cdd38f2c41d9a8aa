"""An interleave set with a member alive but cut off from a source (lead's decision, session 28).

The member has not failed, so the set is not gone (session 27's rule is for failed members):
an access from the source into a reachable member's granule is timed (the hardware serves
it), into the cut-off member's raises "no route" naming it. check() says so: the
``unreachable`` error on a host's window onto the set names the members no chip of that host
reaches and says the set is partly unreachable from it (or unreachable, when no member's
granule is served); before, the error named one member and not the set.

The property cuts chips off (every link of 1-2 chips, plus random links) on small fabrics of
three routing policies; the brute force asks tests/routing_brute.policy_paths which members
each host's chips reach.
"""

import re

import pytest
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import memory_server, policy_paths

from fabric import AddressPlan, Region, RoutingError, Window, access, check

SPECS = ("torus:4x4,hosts=4,chip=h100", "fattree:k=4,chip=h100,hosts=4",
         "rail:servers=3,gpus=2,chip=h100")
UNIT = 256 << 20            # a set's size per way: the CXL decoder unit
GRANULE = 4096


def _planned(f, members):
    """``f`` with one set over ``members`` (host DRAM and chips), mapped by every host."""
    pool = Region(0, UNIT * len(members), tuple(members), kind="dram" if all(
        m in f.domains for m in members) else "hbm", granularity=GRANULE, name="pool")
    if pool.kind == "hbm":      # chips' HBM only: a mixed set would be refused for its kind
        members = [m for m in members if m not in f.domains]
    wins = [Window(h, 1 << 50, target="pool", size=pool.size, name="wp") for h in sorted(f.domains)]
    return f.replace(address_plan=AddressPlan(interleave=[pool], windows=wins, hbm_bytes=16 << 30))


@st.composite
def cases(draw):
    f0 = built(draw(st.sampled_from(SPECS)))
    if draw(st.booleans()):
        members = draw(st.lists(st.sampled_from(sorted(f0.domains)), min_size=2, max_size=4,
                                unique=True))
    else:
        members = draw(st.lists(st.sampled_from(list(f0.endpoints)), min_size=2, max_size=4,
                                unique=True))
    f = _planned(f0, members)
    cut = draw(st.lists(st.sampled_from(list(f0.endpoints)), min_size=1, max_size=2, unique=True))
    links = {frozenset(e) for c in cut for e in f0.graph.edges(c)}
    links |= {frozenset(e) for e in draw(st.lists(st.sampled_from(sorted(f0.graph.edges(), key=str)),
                                                  max_size=3))}
    return f.without(links=[tuple(sorted(e)) for e in sorted(links, key=sorted)]), tuple(members)


def _serving(g, owner):
    """The live nodes that serve ``owner``'s memory: the node, or a host's chips."""
    return [owner] if owner in g.graph else list(g.domains[owner])


def _lost(g, h, members):
    """Brute force: the members no chip of host ``h`` reaches (its own are not asked)."""
    own = set(g.domains[h]) | {h}
    return [m for m in members if m not in own
            and not any(policy_paths(g, c, n) for c in g.domains[h] for n in _serving(g, m))]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_check_names_the_cut_off_members_and_access_serves_the_others(case, data):
    g, members = case
    found = [x for x in check(g) if x.code == "unreachable" and x.severity == "error"]
    for h in sorted(g.domains):
        notes = {m.groups() for m in (re.search(
            r"interleave set 'pool' is (partly )?unreachable from (host\d+)(?:: its granules on "
            r"(.*) \((\d+) of its (\d+) members\))?", x.message) for x in found) if m
            and m.group(2) == h}
        lost = _lost(g, h, members)
        if not lost:
            assert not notes, (h, notes)
        elif len(lost) == len(members):
            assert notes == {(None, h, None, None, None)}
        else:
            ((partly, _, names, k, n),) = notes
            assert (partly, re.findall(r"'([^']+)'", names), k, n) == (
                "partly ", lost, str(len(lost)), str(len(members)))
    # access is as before: a granule is timed where a policy path reaches its server, else
    # "no route" (never "gone as a whole": nothing failed)
    base = g.address_map.region("pool").base
    for _ in range(4):
        src = data.draw(st.sampled_from(list(g.endpoints)))
        k = data.draw(st.integers(0, 2 * len(members) - 1))
        owner = members[k % len(members)]
        srv = memory_server(g, owner, src)
        addr = base + k * GRANULE + 64
        if srv == src or policy_paths(g, src, srv):
            assert access(g, src, addr, transport="native").target == srv
        else:
            with pytest.raises(RoutingError, match="no route") as e:
                access(g, src, addr, transport="native")
            assert "gone as a whole" not in str(e.value)


def test_a_cut_off_server_of_the_rail():
    """rail:servers=3,gpus=2: host2's two NIC-to-rail links failed, so host2's chips are
    alive but an island. A pool over host0..host2's DRAM: host0's window onto it is an error
    that names host2 and says the set is partly unreachable; from chip0 host0's and host1's
    granules are timed, host2's raises "no route" naming chip4."""
    f = _planned(built(SPECS[2]), ["host0", "host1", "host2"])
    g = f.without(links=[("nic4", "rail0"), ("nic5", "rail1")])
    (err,) = [x for x in check(g) if x.where == "window 'wp' of host 'host0'"]
    assert err.severity == "error" and err.message.endswith(
        "; interleave set 'pool' is partly unreachable from host0: its granules on 'host2' (1 of "
        "its 3 members) fail, the other members' are served")
    two = [x.message for x in check(g) if x.where == "window 'wp' of host 'host2'"]
    assert len(two) == 2 and all("its granules on 'host0' and 'host1' (2 of its 3 members)"
                                 in m for m in two)
    base = g.address_map.region("pool").base
    assert access(g, "chip0", base + 8, transport="native").target == "chip0"
    assert access(g, "chip0", base + GRANULE + 8, transport="native").target == "chip2"
    with pytest.raises(RoutingError, match="no route from 'chip0' to 'chip4'"):
        access(g, "chip0", base + 2 * GRANULE + 8, transport="native")
