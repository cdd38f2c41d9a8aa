"""Audit (session 17): hostile address plans, the hints their errors give.

A system file's size fields (host_memory, target_offset, a heap's offset, ...) are read as
sizes, which are decimal with an optional unit; addresses (base, local_base, global_base)
are integers, decimal or hex. A non-finite or too-large float in a size field was answered
"write an integer or a string such as '0x4000_0000' or '16PiB'", and the hex form it
suggested is refused there ("cannot read size '0x4000_0000': expected a number and a
unit"). Each hint now names only forms its field reads, and a hex size says why it is
refused.
"""

import re

import pytest

import fabric
import topologies
from fabric import SpecError
from fabric._units import parse_address, parse_size

HEAD = '[system]\ntopology = "torus:2x2,hosts=2,chip=h100"\n'


def _invalid(tmp_path, body):
    p = tmp_path / "plan.toml"
    p.write_text(HEAD + body)
    return [x.message for x in fabric.check(topologies.load_system(str(p)))
            if x.code == "invalid"]


@pytest.mark.parametrize("table, key, parse", [
    ("address", "host_memory", parse_size), ("address", "hbm_bytes", parse_size),
    ("heap", "offset", parse_size), ("heap", "size", parse_size),
])
@pytest.mark.parametrize("bad", ["inf", "nan", "1e300"])
def test_every_form_a_size_hint_suggests_is_read_by_that_field(tmp_path, table, key, parse,
                                                               bad):
    other = "size = '1GiB'\n" if key == "offset" else ""
    [msg] = _invalid(tmp_path, f"[{table}]\n{other}{key} = {bad}\n")
    hints = re.findall(r"such as (.*)$", msg)
    assert hints, msg
    for form in re.findall(r"'([^']+)'", hints[0]):
        parse(form)                                  # raises if the hint is unreadable


@pytest.mark.parametrize("bad", ["inf", "1e300"])
def test_every_form_an_address_hint_suggests_is_an_address(tmp_path, bad):
    [msg] = _invalid(tmp_path, "[[regions]]\nname = 'r'\nbase = " + bad +
                     "\nsize = '1GiB'\nowner = 'host0'\nkind = 'dram'\n")
    for form in re.findall(r"'([^']+)'", re.findall(r"such as (.*)$", msg)[0]):
        parse_address(form)


def test_a_hex_size_says_sizes_are_decimal():
    with pytest.raises(SpecError, match=r"cannot read size '0x1000': a size is decimal"):
        parse_size("0x1000")
