"""Open the report in a real browser (headless Chromium): no console errors, every figure drawn.

Needs Debian's ``chromium`` package (``apt-get install -y chromium``); skipped, with
that reason, where it is absent. Two runs of the browser: one loads a copy of the
page with a small probe script that records errors (console.error/warn, uncaught
exceptions, resources that fail to load) and each figure's box; the other loads
the untouched page, whose console must stay silent (the page has no script), and
takes a screenshot in which each figure's box must hold a drawing, not a blank.
Set ``COFABRIC_SCREENSHOT`` to a path to keep the screenshot.
"""

import html
import json
import os
import re
import shutil
import subprocess

import matplotlib

matplotlib.use("Agg")
import pytest

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (apt-get install -y chromium)")

_PROBE = """<script>
window.__errors = [];
for (const level of ["error", "warn"]) {
  const orig = console[level];
  console[level] = (...args) => { window.__errors.push(level + ": " + args.join(" "));
                                  orig.apply(console, args); };
}
window.addEventListener("error", (e) => {
  const t = e.target || {};
  window.__errors.push("error: " + (e.message || t.src || t.href || "a resource failed"));
}, true);
window.addEventListener("load", () => {
  const figures = [...document.querySelectorAll("figure")].map((f) => {
    const svg = f.querySelector("svg");
    const r = svg ? svg.getBoundingClientRect() : {left: 0, top: 0, width: 0, height: 0};
    return {id: f.id, svg: !!svg, x: r.left + scrollX, y: r.top + scrollY, w: r.width,
            h: r.height, marks: svg ? svg.querySelectorAll("path, use, text").length : 0};
  });
  const out = document.createElement("pre");
  out.id = "__probe";
  out.textContent = JSON.stringify({errors: window.__errors, figures: figures,
                                    height: document.documentElement.scrollHeight});
  document.body.appendChild(out);
});
</script>"""

WIDTH = 1280


def _chromium(tmp_path, *args):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
           f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(cmd, check=False, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def page(small_report, small_report_dir, tmp_path):
    # Every section, with a small sweep so the test stays quick (conftest.py's small report,
    # built once per run); a copy, since the probe page is written beside index.html.
    out = shutil.copytree(small_report_dir, tmp_path / "report")
    return out / "index.html", small_report


def test_report_renders_in_chromium(page, tmp_path):
    from PIL import Image

    index, report = page
    text = index.read_text(encoding="utf-8")
    probed = index.with_name("probe.html")
    probed.write_text(text.replace("<head>", "<head>" + _PROBE, 1), encoding="utf-8")
    res = _chromium(tmp_path, f"--window-size={WIDTH},1000", "--virtual-time-budget=5000",
                    "--dump-dom", probed.as_uri())
    m = re.search(r'<pre id="__probe">(.*?)</pre>', res.stdout, re.DOTALL)
    assert m, f"the probe did not report; chromium stderr:\n{res.stderr[-2000:]}"
    probe = json.loads(html.unescape(m.group(1)))
    assert probe["errors"] == []
    assert [f["id"] for f in probe["figures"]] == [f"fig-{f.name}" for f in report.figures]
    for f in probe["figures"]:
        assert f["svg"] and f["w"] > 100 and f["h"] > 50 and f["marks"] > 10, f

    height = min(int(probe["height"]) + 10, 16000)
    shot = tmp_path / "report.png"
    res = _chromium(tmp_path, f"--window-size={WIDTH},{height}", f"--screenshot={shot}",
                    index.as_uri())
    assert shot.exists(), res.stderr[-2000:]
    console = [line for line in res.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], "the page logged to the console"
    if os.environ.get("COFABRIC_SCREENSHOT"):
        shutil.copy(shot, os.environ["COFABRIC_SCREENSHOT"])
    image = Image.open(shot).convert("L")
    for f in probe["figures"]:
        if f["y"] + f["h"] > height:
            continue  # beyond a very tall page's screenshot; the probe checked its box
        box = image.crop((int(f["x"]), int(f["y"]), int(f["x"] + f["w"]), int(f["y"] + f["h"])))
        hist = box.histogram()
        inked = 1.0 - hist[255] / sum(hist)  # share of pixels that are not white
        assert inked > 0.01, f"{f['id']} looks blank in the screenshot ({inked:.2%} inked)"
        assert sum(1 for c in hist if c) > 8, f"{f['id']} has almost no distinct shades"
