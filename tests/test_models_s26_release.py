"""Session 26 (models): TensorRT-LLM's code state is selected by the release a row's source
states, as NCCL releases are (lead's decision 1): ``decode_step(trtllm_release=...)``,
``analysis.TRTLLM_RELEASE_DATES``, ``trtllm_release_on(date)`` (the newest release published on
or before a source's date, ``fabric.nccl_release_on``'s rule), ``cofabric decode|serve
--trtllm-release``. A release before ``analysis.TRTLLM_DSV3_GEMMS_RELEASE`` runs DeepSeek's
router gate GEMM and BF16 fused A projection on cuBLAS (their measured ``Linear`` times) at
1-16 tokens a rank too; the default is the newest modelled release (``TRTLLM_NEWEST``), whose
numbers do not move. The tests fail on the parent commit (no such keyword, table or option)."""

import datetime
import json

import pytest
import serving_heldout as sh
from decode_settings import decode_settings
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D
from fabric import SpecError
from tests.cli_run import run_cli

B200 = topologies.build("hgx-b200")
H200 = topologies.build("hgx-h200")
MODELS = {"b200": (B200, "deepseek-r1-nvfp4"), "h200": (H200, "deepseek-r1")}
RELEASES = sorted(analysis.TRTLLM_RELEASE_DATES, key=D._trtllm_version)
OLD = "0.20.0rc2"       # blog 1's release (tagged by 2025-05-16): before the dedicated kernels


def _version(release):
    """A release's version as numbers, written out here (no helper of the module): a final
    release after its release candidates."""
    base, _, rc = release.partition("rc")
    return tuple(int(x) for x in base.split(".")) + ((int(rc),) if rc else (10 ** 9,))


def _settings(fab, model, batch, layout, release, q=1):
    return decode_settings(fab, model, batch, layout, tokens_per_sequence=q,
                           trtllm_release=release)


def test_the_release_table():
    dates = analysis.TRTLLM_RELEASE_DATES
    for day in dates.values():
        datetime.date.fromisoformat(day)
    assert sorted(dates, key=_version) == RELEASES       # the module orders them as written
    assert analysis.TRTLLM_NEWEST == RELEASES[-1] == "1.2.0rc5"
    assert analysis.TRTLLM_DSV3_GEMMS_RELEASE in dates
    # PR #4560 (the dedicated kernels) was opened on 2025-05-22: no release published before
    # that day can carry them, so every such release is before the boundary by version
    opened = datetime.date(2025, 5, 22)
    for release, day in dates.items():
        if datetime.date.fromisoformat(day) < opened:
            assert not analysis.trtllm_runs_dsv3_gemms(release), release
    assert analysis.trtllm_runs_dsv3_gemms(None)            # the default: the newest
    assert [analysis.trtllm_runs_dsv3_gemms(r) for r in RELEASES] == [
        _version(r) >= _version(analysis.TRTLLM_DSV3_GEMMS_RELEASE) for r in RELEASES]


_DAYS = st.dates(datetime.date(2025, 1, 30), datetime.date(2026, 12, 31))


@settings(max_examples=60, deadline=None)
@given(day=_DAYS, later=st.integers(0, 400))
def test_release_on_is_the_newest_version_published_by_then(day, later):
    # brute force: every release published on or before the day, the highest version
    published = [r for r, d in analysis.TRTLLM_RELEASE_DATES.items()
                 if datetime.date.fromisoformat(d) <= day]
    got = analysis.trtllm_release_on(day.isoformat())
    assert got == max(published, key=_version)
    # a later day never stands for a lower version
    other = analysis.trtllm_release_on((day + datetime.timedelta(days=later)).isoformat())
    assert _version(other) >= _version(got)


def test_release_on_refuses_what_it_cannot_answer():
    with pytest.raises(SpecError, match="oldest, 0.17.0, is of 2025-01-30"):
        analysis.trtllm_release_on("2025-01-29")
    with pytest.raises(SpecError, match="not an ISO date"):
        analysis.trtllm_release_on("May 2025")


@settings(max_examples=40, deadline=None)
@given(chip=st.sampled_from(sorted(MODELS)), per_rank=st.integers(1, 40),
       release=st.sampled_from(RELEASES + [None]),
       layout=st.sampled_from(["tp=8", "tp=1,dp=8", "tp=8,dp=1,etp=2"]))
def test_which_gemms_take_the_measured_linear(chip, per_rank, release, layout):
    fab, model = MODELS[chip]
    dp = 8 if layout == "tp=1,dp=8" else 1
    s = _settings(fab, model, per_rank * dp, layout, release)
    assert s.t_dp == per_rank
    dedicated = release is None or _version(release) >= _version("0.21.0rc0")
    small = per_rank <= 16
    # the router: cuBLAS (measured) above 16 tokens a rank in every release, at 1-16 only
    # before the dedicated kernel
    if small and dedicated:
        assert s.router_gemm_use is None and s.router_measured is None
    else:
        assert s.router_gemm_use == ("gemm", per_rank, 256, 7168)
        assert s.router_measured == analysis.trtllm_gemm_time(chip, "bf16", per_rank, 256, 7168)
    # the fused A projection: a BF16 one (B200's NVFP4 checkpoint keeps attention BF16) the
    # same rule; H200's FP8 one is a Linear in every release
    fused = s.attention_gemm_use("fuse_a_gemm")
    if chip == "b200" and small and dedicated:
        assert fused is None
    else:
        assert fused == ("gemm", per_rank, 2112, 7168)
        assert s.attention_gemm_measured("fuse_a_gemm") is not None


@pytest.mark.parametrize("chip", sorted(MODELS))
def test_above_16_tokens_every_release_is_the_same(chip):
    fab, model = MODELS[chip]
    kw = {"batch": 64, "context": 2048, "layout": "tp=8"}
    times = {r: analysis.decode_step(model, fab, trtllm_release=r, **kw).time
             for r in ("0.17.0", OLD, "0.21.0rc0", None)}
    assert len(set(times.values())) == 1, times


def test_batch_one_on_an_old_release_takes_cublas():
    kw = {"batch": 1, "context": 2048, "layout": "tp=8,dp=1,etp=2", "tokens_per_sequence": 4,
          "runtime": "symmetric-memory", "pdl": True}
    new = analysis.decode_step("deepseek-r1-nvfp4", B200, **kw)
    old = analysis.decode_step("deepseek-r1-nvfp4", B200, trtllm_release=OLD, **kw)
    assert analysis.decode_step("deepseek-r1-nvfp4", B200, trtllm_release="1.2.0rc5",
                                **kw).time == new.time
    # cuBLAS's measured 5.45 us router and ~9.3 us fused A against the dedicated kernels'
    # rooflines: slower, by at most those kernels' measured times a MoE layer
    assert old.time > new.time
    router = analysis.trtllm_gemm_time("b200", "bf16", 4, 256, 7168)
    fused = analysis.trtllm_gemm_time("b200", "bf16", 4, 2112, 7168)
    assert old.time - new.time < 61 * (router + fused)
    names = {p.name for p in old.parameters}
    assert "decode.trtllm_gemm_time.b200.bf16.n256.k7168.m4" in names
    assert "decode.trtllm_release" in names
    assert "decode.trtllm_release" not in {p.name for p in new.parameters}
    p = next(p for p in old.parameters if p.name == "decode.trtllm_release")
    assert p.value == OLD and "2025-05-13" in p.source and "cuBLAS" in p.source


def test_bad_releases_are_refused():
    kw = {"batch": 1, "context": 2048}
    for bad, words in (("1.3.0rc1", "0.17.0 to 1.2.0rc5"), ("0.20", "written like"),
                       (20, "written like"), ("v0.20.0", "written like")):
        with pytest.raises(SpecError, match=words):
            analysis.decode_step("deepseek-r1-nvfp4", B200, trtllm_release=bad, **kw)
    with pytest.raises(SpecError, match="engine is 'vllm'"):
        analysis.decode_step("deepseek-r1-nvfp4", B200, trtllm_release=OLD, engine="vllm",
                             **kw)
    with pytest.raises(SpecError, match="engine is None"):
        analysis.prefill_time("deepseek-r1-nvfp4", B200, isl=8, layout="tp=8",
                              trtllm_release=OLD)


def test_a_short_prompt_runs_the_release_too():
    # a prompt of at most 16 tokens: its router on cuBLAS in an old release, the dedicated
    # kernel's roofline in a new one (above 16 every release runs cuBLAS)
    kw = {"isl": 8, "layout": "tp=8", "engine": "trtllm"}
    old = analysis.prefill_time("deepseek-r1-nvfp4", B200, trtllm_release=OLD, **kw)
    new = analysis.prefill_time("deepseek-r1-nvfp4", B200, **kw)
    assert old.compute > new.compute
    kw["isl"] = 1024
    assert analysis.prefill_time("deepseek-r1-nvfp4", B200, trtllm_release=OLD, **kw) == \
        analysis.prefill_time("deepseek-r1-nvfp4", B200, **kw)


def test_serving_takes_the_release_to_its_steps():
    kw = {"isl": 1024, "osl": 2048, "batch": 1, "layout": "tp=8,dp=1,etp=2",
          "engine": "trtllm", "runtime": "symmetric-memory", "pdl": True, "draft_length": 3,
          "usable_hbm": 1.0}
    old = analysis.serving_point("deepseek-r1-nvfp4", B200, trtllm_release=OLD, **kw)
    new = analysis.serving_point("deepseek-r1-nvfp4", B200, **kw)
    assert old.tpot > new.tpot


def test_every_trtllm_heldout_row_names_its_release():
    rows = [r for r in sh.load_rows() if r["expressible"] == "yes" and "-trtllm-" in r["id"]]
    assert {r["id"] for r in rows} == set(sh.TRTLLM_ROW_RELEASES)
    for row in rows:
        kind, value, what = sh.TRTLLM_ROW_RELEASES[row["id"]]
        assert what.strip() and kind in ("stated", "date", "undated"), row["id"]
        release, text = sh.trtllm_release_of(row)
        assert sh.conditions(row).get("trtllm_release") == release, row["id"]
        if kind == "date":
            assert release == analysis.trtllm_release_on(value)
            assert text == f"TensorRT-LLM {release} (tagged by {value})"
        elif kind == "stated":
            assert release == analysis.trtllm_release(value) and "tagged" not in text
        else:
            assert release is None and analysis.TRTLLM_NEWEST in text
    # the 2025 batch-1 rows ran code from before the dedicated router / fused A kernels
    for row in rows:
        if row["concurrency"] == "1":
            assert not analysis.trtllm_runs_dsv3_gemms(sh.trtllm_release_of(row)[0]), row["id"]


ARGS = ["decode", "hgx-b200", "--model", "deepseek-r1-nvfp4", "--context", "2048",
        "--layout", "tp=8,dp=1,etp=2", "--runtime", "symmetric-memory", "--pdl"]


def test_decode_flag_reaches_the_step():
    rc, out, err = run_cli(ARGS + ["--trtllm-release", OLD, "--json"])
    assert rc == 0, err
    got = json.loads(out)["time"]
    want = analysis.decode_step("deepseek-r1-nvfp4", B200, batch=1, context=2048,
                                layout="tp=8,dp=1,etp=2", runtime="symmetric-memory", pdl=True,
                                trtllm_release=OLD).time
    assert got == pytest.approx(want, rel=1e-12)
    rc, out, err = run_cli(ARGS + ["--trtllm-release", OLD])
    assert rc == 0, err
    assert f"TensorRT-LLM {OLD}" in out.splitlines()[1]
    rc, out, _ = run_cli(ARGS)
    assert "TensorRT-LLM" not in out.splitlines()[1]       # the default is not said


def test_serve_flag_reaches_the_frontier():
    argv = ["serve", "hgx-b200", "--model", "deepseek-r1-nvfp4", "--isl", "1024", "--osl",
            "1024", "--layout", "tp=8,dp=1,etp=2", "--batches", "1", "--no-speculative",
            "--quiet", "--json"]
    got = {}
    for release in (OLD, None):
        rc, out, err = run_cli(argv + (["--trtllm-release", release] if release else []))
        assert rc == 0, err
        got[release] = json.loads(out)
    assert got[OLD]["settings"]["trtllm_release"] == OLD
    assert "trtllm_release" not in got[None]["settings"]
    assert got[OLD]["frontier"][0]["tpot_s"] > got[None]["frontier"][0]["tpot_s"]


def test_help_names_the_default():
    for cmd in ("decode", "serve"):
        rc, out, _ = run_cli([cmd, "--help"])
        assert rc == 0
        text = " ".join(out.split())
        entry = text[text.index("--trtllm-release VERSION the TensorRT-LLM"):]
        assert "default: 1.2.0rc5, the newest modelled" in entry, cmd


@pytest.mark.parametrize("extra, words", [
    (["--trtllm-release", "0.20"], ("argument --trtllm-release", "written like 0.20.0")),
    (["--trtllm-release", "2.0.0"], ("argument --trtllm-release", "0.17.0 to 1.2.0rc5")),
    (["--trtllm-release", OLD, "--engine", "vllm"], ("TensorRT-LLM release", "'vllm'")),
])
def test_bad_flags_one_line_exit_2(extra, words):
    rc, out, err = run_cli(ARGS + extra)
    assert rc == 2 and not out
    assert err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)
