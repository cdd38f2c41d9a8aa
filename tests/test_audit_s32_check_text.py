"""Audit session 32: check()'s warning for a host that maps none of its chips says why truly.

With the default windows on, the warning gave one reason, "these chips own none (their memory
is in regions of several owners)", whenever a host's windows mapped none of its chips'
memory. A packed layout of alignment 2**63 puts chip2.hbm and chip3.hbm beyond the address
width (errors of their own): the chips own their HBM regions, but the windows onto them do
not stand, and adding a window (the advice) fixes nothing. A chip whose memory is one region
of kind dram (explicit layout) owns a region of one owner too. Now: "refused" with the errors
as the fix in the first case, "of another kind" named in the second.
"""
from fabric import check
from topologies import read_system

TORUS = '[system]\ntopology = "torus:2x2,chip=h100"\n[address]\n'


def _warnings(text):
    return [x.message for x in check(read_system(text, "s.toml")) if x.severity == "warning"]


def test_own_hbm_regions_beyond_the_width_are_named_as_refused():
    (msg,) = _warnings(TORUS + 'layout = "packed"\nalignment = 9223372036854775808\n')
    assert msg.startswith("host domain host1 maps none of its own chips' memory ('chip2' and "
                          "'chip3'): the default windows onto its chips' own HBM regions are "
                          "refused, so its chips cannot load or store one another's memory "
                          "(see the errors on those regions)")
    assert "own none" not in msg


def test_memory_of_another_kind_is_named():
    regions = "".join(
        f'[[regions]]\nname = "r{i}"\nbase = {i << 32}\nsize = "1GiB"\nowner = "{c}"\n'
        f'kind = "{k}"\n' for i, (c, k) in enumerate([("chip0", "hbm"), ("chip2", "dram")]))
    (msg,) = _warnings(TORUS + 'layout = "explicit"\n' + regions)
    assert "these chips own none (their memory is in regions of several owners or of another " \
           "kind), so its chips cannot" in msg
