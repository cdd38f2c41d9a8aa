import json

import pytest

from analysis._cli import main


def test_metrics_json_closed_forms(capsys):
    assert main(["metrics", "torus:6x6x6", "fattree:k=10", "--json"]) == 0
    torus, tree = json.loads(capsys.readouterr().out)
    assert torus["spec"] == "torus:6x6x6" and torus["endpoints"] == 216
    assert torus["links"] == 3 * 216 and torus["diameter"] == 9
    assert torus["bisection_links"] == 2 * 36
    assert torus["avg_hops"] == pytest.approx(3 * 6 / 4 * 216 / 215)
    assert tree["switches"] == 125 and tree["links"] == 750 and tree["bisection_links"] == 125
    for key in ("switches", "bisection_bandwidth"):
        assert key in torus


def test_metrics_default_table(capsys):
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert "sd200-ultra" in out and "cluster-128" in out


@pytest.mark.parametrize("spec", ["hypermesh:4x0x8", "fattree:k=7", "nonsense", "torus:9999x9999"])
def test_bad_spec_one_line_exit_2(spec, capsys):
    assert main(["metrics", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cofabric metrics: error:")


def test_unknown_command_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
