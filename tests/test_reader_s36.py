"""Session 36 (reader): each message says a bad value once and names what it may be.

A system file's size or address that parse_size / parse_address refuses said its value twice
("size = '12QB': cannot read size '12QB': unknown prefix 'Q'": the reader's 'key = value: '
before a sentence that quotes the value); now "size: " and their sentence. format_size's
``binary`` may be None (the default) but its refusal said 'must be True or False', and
moe_exchange's ``adaptive_routing`` refused a wrong kind with a SpecError: both through
flag_of(optional=True), the one flag check.
"""

import re

import pytest

import fabric
import topologies

SYSTEM = """\
[system]
topology = "torus:2x2,chip=h100"

[[regions]]
name = "cxl.x"
base = "0x7f00_0000_0000"
size = {size}
owner = "host0"
kind = "dram"
"""


@pytest.mark.parametrize("size, said", [
    ('"12QB"', "size: cannot read size '12QB': unknown prefix 'Q'"),
    ("-1", "size: a size is >= 0 bytes, got -1"),
    ("1.5", "size: size must be a whole number of bytes, got 1.5"),
    ('"0x10"', "size: cannot read size '0x10': a size is decimal"),
], ids=["unit", "negative", "fraction", "hex"])
def test_a_system_file_says_a_refused_size_once(size, said):
    s = fabric.read_system(SYSTEM.format(size=size), "s.toml", build=topologies.build)
    (message,) = [x.message for x in fabric.check(s) if x.severity == "error"]
    assert message.startswith(said), message
    assert message.count(size.strip('"')) == 1, message


@pytest.mark.parametrize("value, shown", [(1, "1 (an int)"), ("no", "'no' (a str)")])
def test_format_size_names_none_among_binary_s_values(value, shown):
    with pytest.raises(TypeError, match=rf"^format_size: binary must be True, False or None, "
                                        rf"got {re.escape(shown)}$"):
        fabric.format_size(10**6, binary=value)
    assert fabric.format_size(10**6, binary=None) == "1MB"
