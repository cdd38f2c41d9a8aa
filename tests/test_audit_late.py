"""Hidden checks of session 5's new public surface (audit, late shift): bad input to
``analysis.idle_chips``, ``analysis.WeightFormat`` and ``fabric.ChipSpec(tensor_flops=)``
gets a clear error naming the input, and valid calls keep their answers."""

import dataclasses
import pathlib

import pytest

import analysis
import fabric
import topologies
from fabric import SpecError

NAN, INF = float("nan"), float("inf")


@pytest.fixture(scope="module")
def node():
    return topologies.build("switch:8,chip=b200")


@pytest.mark.parametrize("chips", [0, -1, 2.5, True, NAN, INF, "4", None])
def test_idle_chips_refuses_a_bad_instance_size(node, chips):
    with pytest.raises((SpecError, TypeError), match="chips"):
        analysis.idle_chips(node, chips)


def test_idle_chips_valid_answers_unchanged(node):
    degraded = node.without(chips=["chip3"])
    assert [analysis.idle_chips(degraded, n) for n in (1, 2, 4, 7, 8, 100)] == [0, 1, 3, 0, 7, 7]
    assert analysis.instance_sizes(degraded) == [1, 2, 4, 7]


@pytest.mark.parametrize("field,bad", [
    ("bits", NAN), ("bits", -1), ("bits", 0), ("bits", True), ("bits", INF), ("bits", "8"),
    ("scale_bits", NAN), ("scale_bits", -8), ("scale_bits", True), ("scale_bits", INF),
    ("group", 0), ("group", -1), ("group", 2.5), ("group", True), ("group", "32"),
])
def test_weight_format_refuses_bad_figures(field, bad):
    good = {"name": "x", "bits": 4, "scale_bits": 8, "group": 16, "source": "s", "math": "fp4"}
    with pytest.raises((SpecError, TypeError), match=field):
        analysis.WeightFormat(**{**good, field: bad})


def test_weight_formats_valid_figures_unchanged():
    wf = analysis.WEIGHT_FORMATS
    assert wf["int4-g32"].bytes_per_weight == 0.5625
    assert wf["nvfp4"].bytes_per_weight == 0.5625
    assert wf["bf16"].bytes_per_weight == 2.0
    assert wf["fp8-block128"].bytes_per_weight == 1 + 4 / (128 * 128)


@pytest.mark.parametrize("bad", [(("fp8",),), "fp8", None, 5, (("fp8", 1e15, 2),)])
def test_chip_tensor_flops_must_be_format_value_pairs(bad):
    chip = fabric.chip_spec("b200")
    with pytest.raises(SpecError, match="tensor_flops"):
        dataclasses.replace(chip, tensor_flops=bad)


def test_chip_tensor_flops_format_of_a_wrong_kind():
    # a pair in (value, format) order: the format is a float, a wrong kind (TypeError, the
    # one math-format check fabric._chips.check_math_format; session 36: was a SpecError)
    with pytest.raises(TypeError, match=r"tensor_flops format must be a str, got 1000000000000000\.0 \(a float\)$"):
        dataclasses.replace(fabric.chip_spec("b200"), tensor_flops=((1e15, "fp8"),))


def test_chip_tensor_flops_valid_forms_unchanged():
    chip = fabric.chip_spec("b200")
    again = dataclasses.replace(chip, tensor_flops=dict(chip.tensor_flops))
    assert again.tensor_flops == chip.tensor_flops
    assert dataclasses.replace(chip, tensor_flops=()).peak("fp8") is None


@pytest.mark.parametrize("field", ["weight_format", "ffn_format", "mtp_format", "expert_format"])
@pytest.mark.parametrize("bad", [["bf16"], {"bits": 4}])
def test_model_format_of_a_wrong_type_is_named(tmp_path, field, bad):
    # a TOML array or table where a format name belongs: the key named, not "unhashable type";
    # a wrong kind is a TypeError (STYLE's rule, session 33), the file's a SpecError naming it
    with pytest.raises(TypeError, match=f"^{field} must be a str or None, got"):
        dataclasses.replace(analysis.model_config("deepseek-r1-nvfp4"), **{field: bad})
    src = (pathlib.Path(__file__).parent / "data" / "model_small.toml").read_text()
    value = '["bf16"]' if isinstance(bad, list) else "{ bits = 4 }"
    path = tmp_path / "m.toml"
    path.write_text(src.replace("[attention]", f"{field} = {value}\n\n[attention]"))
    with pytest.raises(SpecError, match=f"m.toml: {field} must be a str or None"):
        analysis.load_model_toml(path)


def test_cost_refuses_more_devices_per_process_than_ranks():
    # nccl-tests -g N: one process drives N of the operation's ranks; N > ranks is no run
    f = topologies.build("dgx-h100")
    with pytest.raises(SpecError, match="devices_per_process"):
        analysis.cost(f, "all-reduce", 1024, devices_per_process=9)
    with pytest.raises(SpecError, match="devices_per_process"):
        analysis.cost(f, "all-reduce", 1024, ranks=f.endpoints[:4], devices_per_process=8)
    degraded = f.without(chips=["chip3"])          # 7 live chips
    with pytest.raises(SpecError, match="devices_per_process"):
        analysis.cost(degraded, "all-reduce", 1024, devices_per_process=8, runtime="ideal")
    # valid calls unchanged: N = ranks
    one = analysis.cost(degraded, "all-reduce", 1024)
    seven = analysis.cost(degraded, "all-reduce", 1024, devices_per_process=7, iterations=40)
    c = fabric.runtime("nccl").host_launch
    assert seven.time - one.time == pytest.approx(
        analysis.host_launch_delay(one.time, c, 7, 40), rel=1e-12)


def test_expert_parallel_instance_survives_a_failed_chip_on_a_rail_cluster():
    f = topologies.build("rail:servers=9,gpus=8,chip=h100")
    kw = {"isl": 2000, "osl": 100, "batch": 64, "layout": "tp=1,dp=64",
          "ep_kernel": "deepep-low-latency"}
    intact = analysis.serving_point("deepseek-v3", f, **kw)
    degraded = analysis.serving_point("deepseek-v3", f.without(chips=["chip5"]), **kw)
    assert degraded.tokens_per_s_user <= intact.tokens_per_s_user * (1 + 1e-9)
