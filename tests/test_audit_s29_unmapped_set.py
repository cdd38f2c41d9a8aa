"""Audit, session 29 (audit's session-28 DECISION? 23:39, decided at session 28's stop):
check() was clean for an explicit-layout plan whose chips' memory is only an interleave set
over them, with the default windows on. The defaults map each chip's own HBM region and these
chips own none, so every load or store into the set is refused ('no window of this domain
maps ...'). Session 25's warning for a host that maps none of its chips' memory now covers
this case too; a host whose chips hold no memory at all is not warned.
"""

import pytest

from fabric import TranslationError, access, check
from topologies import read_system

PLAN = ('[system]\ntopology = "torus:2x2,chip=h100"\n[address]\nlayout = "explicit"\n'
        'hbm_bytes = "16GiB"\n[[regions]]\nname = "p"\nbase = 0\nsize = "1GiB"\n'
        'owners = ["chip0", "chip1"]\ngranularity = "4KiB"\nkind = "hbm"\n')


def test_a_set_the_default_windows_do_not_map_is_warned():
    s = read_system(PLAN, "plan.toml")
    found = check(s)
    assert [(x.code, x.severity, x.where) for x in found] == [("unreachable", "warning", "host0")]
    assert "the default windows map each chip's own HBM region" in found[0].message
    with pytest.raises(TranslationError, match="no window of this domain maps"):
        access(s.fabric, "chip0", 4096)             # chip1's granule
