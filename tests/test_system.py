"""Tests for system files: TOML parsing, human units, line and column of errors."""

import re
from pathlib import Path

import pytest

import fabric
import topologies
from fabric import (
    AddressPlan,
    DomainLimits,
    Grant,
    SpecError,
    SymmetricHeap,
    System,
    Window,
    check,
)
from fabric._units import GiB, MiB, TiB
from topologies import load_system, read_system

EXAMPLE = str(Path(__file__).resolve().parent.parent / "examples" / "sd200-ultra.toml")


def test_example_reads_with_human_units():
    s = load_system(EXAMPLE)
    assert isinstance(s, System) and s.findings == ()
    plan = s.plan
    assert isinstance(plan, AddressPlan)
    assert (plan.layout, plan.width, plan.host_memory) == ("owner-bits", 57, TiB)
    assert plan.limits == DomainLimits(1024, 2 * MiB, "size")
    assert plan.heap.size == 16 * GiB and plan.heap.offset == 32 * GiB
    assert plan.interleave[0].owners == ("host0", "host1", "host2", "host3")
    assert plan.interleave[0].granularity == 4096
    w = plan.windows[0]
    assert (w.host, w.local_base, w.target) == ("host0", 0x1000_0000_0000, "pool")
    assert plan.windows[1].permissions == "r" and plan.windows[1].size == 256 * GiB
    assert s.fabric.n_endpoints == 128 and s.fabric.name == "sd200-ultra (example plan)"


def test_where_names_file_and_line():
    s = load_system(EXAMPLE)
    text = Path(EXAMPLE).read_text().splitlines()
    line = int(s.plan.windows[1].where.rsplit(":", 1)[1].split()[0])
    assert text[line - 1].strip() == "[[windows]]"
    assert "host5-dram-ro" in "\n".join(text[line:line + 3])


def test_from_text_with_explicit_fields():
    s = read_system('''
[system]
topology = "dgx-h100"
[address]
layout = "packed"
alignment = "1GiB"
host_memory = 0
[[windows]]
host = "host0"
local_base = "0x100_0000_0000"
global_base = 4096
size = "8KiB"
page_size = 4096
[[grants]]
host = "host0"
target = "*"
''')
    assert s.plan.layout == "packed" and s.plan.alignment == GiB and s.plan.host_memory == 0
    assert s.plan.windows == (Window("host0", 1 << 40, 8192, global_base=4096, page_size=4096),)
    assert s.plan.grants == (Grant("host0", "*"),)


def test_heap_overrides_are_read():
    s = read_system('[system]\ntopology = "dgx-h100"\n[heap]\nsize = "1GiB"\n'
                    '[heap.chips.chip3]\noffset = "2GiB"\n')
    assert s.plan.heap == SymmetricHeap(GiB, chips={"chip3": {"offset": 2 * GiB}})


@pytest.mark.parametrize("text, line, col", [
    ('[system]\ntopology = "sd200-ultra"\nwidth = = 5\n', 3, 9),
    ('[system\ntopology = "x"\n', 1, 8),
    ('[system]\ntopology = "a"\ntopology = "b"\n', 3, 15),   # tomllib's position
])
def test_malformed_toml_gives_line_and_column(text, line, col):
    with pytest.raises(SpecError, match=f"f.toml: line {line}, column {col}: invalid TOML"):
        read_system(text, "f.toml")


@pytest.mark.parametrize("text, msg", [
    ('[address]\nwidth = 57\n', "needs a \\[system\\] table"),
    ('[system]\nname = "x"\n', "needs a \\[system\\] table"),
    ('[system]\ntopology = "torus:banana"\n', "f.toml:1 system: topology 'torus:banana'"),
    ('[system]\ntopology = "sd200-ultra"\nchip = "z80"\n', "unknown chip 'z80'"),
])
def test_unusable_system_refused(text, msg):
    with pytest.raises(SpecError, match=msg):
        read_system(text, "f.toml")


@pytest.mark.parametrize("extra, msg", [
    ('[address]\nhost_memory = "1TiX"\n', "^host_memory: cannot read size '1TiX'"),
    ('[address]\nlayuot = "packed"\n', "unknown keys \\['layuot'\\]"),
    ('[[windows]]\nhost = "host0"\n', "needs local_base"),
    ('[[windows]]\nhost = "host0"\nlocal_base = "0xZZ"\n', "^local_base: address '0xZZ' is not"),
    ('[[windows]]\nhost = "host0"\nlocal_base = -4096\n', "non-negative"),
    ('[[regions]]\nbase = 0\nsize = 4096\n', "needs owner"),
    ('[frobnicate]\nx = 1\n', "unknown tables \\['frobnicate'\\]"),
    ('[[grants]]\nhost = "host0"\n', "needs target"),
])
def test_bad_values_become_findings_with_lines(extra, msg):
    s = read_system('[system]\ntopology = "dgx-h100"\n' + extra, "f.toml")
    assert len(s.findings) >= 1
    assert any(f.code == "invalid" and f.severity == "error" for f in s.findings)
    assert any(re.search(msg, f.message) for f in s.findings), s.findings
    assert all(f.where.startswith("f.toml") for f in s.findings)


def test_custom_build_function():
    calls = []

    def build(spec):
        calls.append(spec)
        return topologies.build("dgx-h100")

    s = fabric.read_system('[system]\ntopology = "my-own"\n', build=build)
    assert calls == ["my-own"] and s.fabric.n_endpoints == 8


def test_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        load_system(tmp_path / "none.toml")


def test_non_utf8_refused(tmp_path):
    p = tmp_path / "bin.toml"
    p.write_bytes(b"\xff\xfe[system]")
    with pytest.raises(SpecError, match="UTF-8"):
        load_system(p)


_HUGE = "0x1_0000_0000_0000_0000_0000"


@pytest.mark.parametrize("extra, code", [
    (f'[[windows]]\nhost="host0"\nlocal_base="{_HUGE}"\ntarget="chip1"\nsize=4096\n',
     "out-of-range"),
    (f'[[windows]]\nhost="host0"\nlocal_base=0\nglobal_base="{_HUGE}"\nsize=4096\n',
     "out-of-range"),
    ('[[windows]]\nhost="host0"\nlocal_base=0\ntarget="chip1"\nsize="100000PiB"\n',
     "out-of-range"),
    (('[[windows]]\nhost="host0"\nlocal_base="0x1000_0000_0000"\ntarget="chip1"\n'
      'page_size="100000PiB"\n'), "out-of-range"),
    (f'[[regions]]\nbase="{_HUGE}"\nsize=4096\nowner="host0"\nkind="dram"\nname="x"\n',
     "out-of-range"),
    ('[address]\nhost_memory="1000000PiB"\n', "out-of-range"),
    ('[[windows]]\nhost="host0"\nlocal_base=0\ntarget=["chip1"]\n', "invalid"),
    ('[[windows]]\nhost=5\nlocal_base=0\ntarget="chip1"\n', "invalid"),
    ('[[regions]]\nbase=0\nsize=4096\nowners=["host0",["x"]]\ngranularity=4096\n', "invalid"),
    ('[[grants]]\nhost=["host0"]\ntarget="chip1"\n', "invalid"),
    ('[address]\ndefault_windows="yes"\n', "invalid"),
    ('[address]\nwidth="57"\n', "invalid"),
    ('[limits]\ntranslation_entries=3.5\n', "invalid"),
    ('[heap]\nsize="1GiB"\nchips=5\n', "invalid"),
    ('[heap]\nsize="1GiB"\n[heap.chips]\nchip1=5\n', "invalid"),
    ('[heap]\nsize="1GiB"\n[heap.chips.chip1]\nfoo=5\n', "invalid"),
    ('heap = "big"\n', "invalid"),
    ('windows = [1, 2]\n', "invalid"),
])
def test_hostile_values_are_findings_not_crashes(extra, code):
    s = read_system('[system]\ntopology = "dgx-h100"\n' + extra, "f.toml")
    found = s.findings + tuple(check(s))
    assert code in {f.code for f in found}, found
