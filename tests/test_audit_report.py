"""Presentation defects of the report a reviewer flagged, each checked so it stays fixed.

- The decode table (12 columns, system names like ``sd200-ultra:chip=h100``, layouts like
  ``tp=1,dp=128,ep=128``) scrolled sideways in a 1400-px window: tables of many columns are
  set dense and layouts may wrap after their commas (checked in headless Chromium).
- A column empty in every row (the failures table's ``note``) was shown.
- Parameter values read ``5.12e+04 Gb/s`` and ``4.096kB`` (a 4096-B MTU).
- A sentence of the symmetric-memory section quoted NCCL at "10-25 us" by hand while its own
  table showed 2.9-159 us: now generated from the table.
- The not-applicable table repeated one reason per operation and transport (70 rows).
"""

import html
import re
import shutil
import subprocess

import pytest

from analysis._report_parts import Column, Report, Section, Table, fmt_value
from analysis._report_render import DENSE_COLUMNS, render_html, render_markdown
from analysis._report_sweeps import _fixed_costs_text, _merged_reasons
from fabric import format_time

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)),
                None)

SYSTEMS = ("sd200-ultra:chip=h100", "cluster-128", "nvl72:chip=h100", "tpu-v4-cube:chip=h100")
LAYOUTS = ("tp=1,dp=128,ep=128", "tp=1,dp=128,ep=128", "tp=1,dp=72,ep=72", "tp=1,dp=64,ep=64")
PARTS = ("per token", "tokens/s per user", "attention", "FFN / experts", "output head",
         "exposed communication", "kernel gaps (graph replay)", "HBM per chip")


def _decode_like_report():
    """A report with the default report's decode table as it was when it scrolled."""
    columns = (Column("model", "model"), Column("system", "system"), Column("layout", "layout"),
               Column("kernel", "MoE exchange"),
               *(Column(f"p{i}", label, format_time) for i, label in enumerate(PARTS)),
               Column("note", "note"))
    rows = tuple({"model": m, "system": s, "layout": lay,
                  "kernel": "deepep-low-latency" if s == "cluster-128" else "one-sided",
                  **{f"p{i}": 9.537e-3 / (i + 1) for i in range(len(PARTS))}, "note": ""}
                 for m in ("kimi-k2", "hypothetical-2.8t") for s, lay in zip(SYSTEMS, LAYOUTS))
    table = Table("decode", "Decode step time and its parts", columns, rows,
                  "Seconds in decode.csv.")
    # the assumptions table: a source citing file paths, a long parameter name, systems
    source = ("NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/communicationKernels/"
              "moeAlltoAllKernels.cu: dispatch = moeA2APrepareDispatchKernel; in "
              "tensorrt_llm/_torch/modules/fused_moe/communication/nvlink_one_sided.py, whose "
              "dispatch adds moe_a2a_sanitize_expert_ids")
    assumptions = Table("assumptions", "Every parameter", (
        Column("source", "source"), Column("parameters", "parameters"),
        Column("used_by", "used by")), tuple(
            {"source": source, "parameters": "exchange.latency.hopper.l2_atomic_roundtrip = "
             "197.9ns", "used_by": ", ".join(SYSTEMS[i] for i in (0, 2, 3))}
            for _ in range(3)))
    return Report(SYSTEMS, (), (Section("decode", "MoE decode", tables=(table, assumptions)),),
                  "cofabric")


def test_wide_tables_are_dense_and_empty_columns_are_left_out():
    page = render_html(_decode_like_report(), {})
    assert len(PARTS) + 4 > DENSE_COLUMNS
    assert '<table id="table-decode" class="dense">' in page
    assert "tp=1,<wbr>dp=128,<wbr>ep=128" in page
    assert "sd200-ultra:chip=h100" in page                 # system names stay whole
    assert "cpp/<wbr>tensorrt_llm/<wbr>kernels/" in page and "51,200 Gb/s" not in page
    assert "<th>note</th>" not in page
    md = render_markdown(_decode_like_report())
    assert "| note" not in md and md.count("| kimi-k2 |") == 4


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed")
def test_the_decode_and_assumption_tables_do_not_scroll_at_1400_px(tmp_path):
    probe = """<script>window.addEventListener("load", () => {
      const o = [...document.querySelectorAll("div.wide")].map(
          (e) => e.scrollWidth - e.clientWidth);
      const p = document.createElement("pre"); p.id = "__probe";
      p.textContent = JSON.stringify(o); document.body.appendChild(p); });</script>"""
    page = tmp_path / "index.html"
    page.write_text(render_html(_decode_like_report(), {}).replace("<head>", "<head>" + probe),
                    encoding="utf-8")
    res = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900",
         "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    m = re.search(r'<pre id="__probe">(.*?)</pre>', res.stdout, re.DOTALL)
    assert m, res.stderr[-2000:]
    assert html.unescape(m.group(1)) == "[0,0]", "a table is wider than the page"


@pytest.mark.parametrize("value, unit, text", [
    (51_200.0, "Gb/s", "51,200 Gb/s"), (0.009766, "W/(Gb/s)", "0.009766 W/(Gb/s)"),
    (4096, "B", "4KiB"), (256, "B", "256B"), (80e9, "B", "80GB"), (1e-5, "s", "10us"),
    (0.85, "1", "0.85"), (2.0e12, "x", "2e+12 x"),
])
def test_parameter_values_read_plainly(value, unit, text):
    assert fmt_value(value, unit) == text


def test_fixed_cost_sentence_is_the_tables():
    rows = [{"size_bytes": 1024, "symmetric_time_s": 2.4e-6, "nccl_time_s": 1.591e-4},
            {"size_bytes": 1024, "symmetric_time_s": 3e-6, "nccl_time_s": 2.9e-6},
            {"size_bytes": 1024, "symmetric_time_s": None, "nccl_time_s": 1.0},
            {"size_bytes": 2 ** 20, "symmetric_time_s": 1.0, "nccl_time_s": 9.0}]
    assert _fixed_costs_text(rows) == (" (at 1KiB: 2.400us-3.000us for the symmetric-memory kernels "
                                       "against 2.900us-159.1us for NCCL)")
    assert _fixed_costs_text([dict(rows[2])]) == ""


def test_not_applicable_rows_merge_only_one_reason():
    base = {"system": "s", "algorithm": "in-switch", "reason": "no reducing switch"}
    rows = [dict(base, op=op, transport_asked=t) for op in ("all-reduce", "reduce")
            for t in ("native", "rdma")]
    rows.append(dict(base, op="all-gather", transport_asked="native", reason="other"))
    merged = _merged_reasons(rows)
    assert [(m["op"], m["transport_asked"], m["reason"]) for m in merged] == [
        ("all-reduce, reduce", "native, rdma", "no reducing switch"),
        ("all-gather", "native", "other")]
