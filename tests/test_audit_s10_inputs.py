"""Audit, session 10 (second shift): bad input through this session's new public API
and CLI options, edge cases and degraded fabrics."""

import pytest

import topologies
from analysis._cli import main
from fabric import SpecError


@pytest.mark.parametrize("address, says", [("-0x10", "non-negative"), ("-16", "non-negative"),
                                           ("-0b1", "is not a number")])   # no 0b (lead, s19)
@pytest.mark.parametrize("where", ["last", "before-option", "after-dashes"])
def test_translate_names_a_negative_address(address, says, where, capsys):
    # '-0x10' used to be read as an unknown option: 'the following arguments are
    # required: ADDRESS', about an address that was given
    argv = {"last": ["translate", "hgx-h200", "--host", "host0", address],
            "before-option": ["translate", "hgx-h200", "--host", "host0", address, "--json"],
            "after-dashes": ["translate", "hgx-h200", "--host", "host0", "--", address]}[where]
    with _exit_code() as code:
        code.value = main(argv)
    err = capsys.readouterr().err
    assert code.value == 2
    assert err.count("\n") == 1 and says in err and address in err


@pytest.mark.parametrize("address", ["-1e3", "-.5"])
def test_translate_names_a_negative_non_number(address, capsys):
    assert main(["translate", "hgx-h200", "--host", "host0", address]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a number" in err and address in err


class _exit_code:
    """Holds main's return value, or argparse's SystemExit code."""

    value = None

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is SystemExit:
            self.value = exc.code
            return True
        return False


@pytest.mark.parametrize("spec, option, keyword", [
    ("rail:servers=2,gpus=4,pix=0", "pix", "nic_share"),
    ("rail:servers=2,gpus=4,pix=-1", "pix", "nic_share"),
    ("rail:servers=2,gpus=0", "gpus", "gpus_per_server"),
    ("rail:servers=2,gpus=4,links=0", "links", "scaleup_links"),
    ("torus:4x4,hosts=0", "hosts", "chips_per_host"),
    ("leafspine:k=8,over=0", "over", "oversubscription"),
    ("rail:servers=2,gpus=4,nic=foo", "nic", "nic_tech"),
    ("rail:servers=2,gpus=4,scaleup=foo", "scaleup", "scaleup_tech"),
])
def test_a_spec_error_names_the_option_the_reader_typed(spec, option, keyword):
    with pytest.raises(SpecError) as e:
        topologies.build(spec)
    assert f"{spec!r}: {option} ({keyword})" in str(e.value)
    assert f"{spec!r}: {keyword}" not in str(e.value)


def test_a_builder_keyword_error_is_unchanged_through_the_builder():
    with pytest.raises(SpecError, match=r"^nic_share must be an integer >= 1, got nic_share=0$"):
        topologies.rail_optimized(2, 4, nic_share=0)


def test_cli_names_the_spec_option_on_one_line(capsys):
    assert main(["translate", "rail:servers=2,gpus=4,pix=0", "--host", "host0", "0x10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pix (nic_share) must be an integer >= 1" in err
