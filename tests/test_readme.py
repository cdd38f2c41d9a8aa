"""The README's Python examples run as written (from the repository root)."""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_readme_examples_run_in_order(monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples name files relative to the repository root
    namespace = {}
    for block in BLOCKS:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["m"].diameter == 3


@pytest.mark.skipif(not (ROOT / ".ci" / "run").exists(), reason="no CI script")
def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pytest -q" in ci and os.access(ROOT / ".ci" / "run", os.R_OK)


def _chip_table():
    text = (ROOT / "README.md").read_text()
    head = "| chip | HBM | HBM TB/s | BF16 | FP8 | FP4 | INT8 |"
    rows = text[text.index(head):].split("\n\n")[0].splitlines()[2:]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows]


def _shown(value, text):
    """``value`` written to the digits ``text`` shows equals ``text``."""
    decimals = len(text.partition(".")[2])
    return f"{value:.{decimals}f}" == text


def test_readme_chip_table_is_what_the_chips_carry():
    """Every cell of the README's chip table is the chip's figure to the digits shown (the
    table was written by hand; nothing held it to fabric._chips)."""
    import fabric

    rows = _chip_table()
    assert len(rows) >= 8
    for chips, hbm, tbs, *peaks in rows:
        for name in re.findall(r"`([^`]+)`", chips):
            spec = fabric.chip_spec(name)
            assert fabric.parse_size(hbm.replace(" ", "")) == spec.hbm_bytes, (name, hbm)
            assert _shown(spec.hbm_bandwidth / 1e12, tbs), (name, tbs)
            for fmt, shown in zip(("bf16", "fp8", "fp4", "int8"), peaks):
                peak = dict(spec.tensor_flops).get(fmt)
                assert (shown == "-") == (peak is None), (name, fmt, shown)
                assert shown == "-" or _shown(peak / 1e15, shown), (name, fmt, shown, peak)


def test_readme_symmetric_memory_ratios_are_what_the_model_gives():
    """'symmetric-memory kernels against NCCL on 8 H100 are 6.6x faster at 1 KiB, 2.9x at
    1 MiB and even at 1 GiB' (the README's summary of the seed's 3.5x)."""
    import topologies
    from analysis import cost

    text = " ".join((ROOT / "README.md").read_text().split())
    f = topologies.build("dgx-h100")
    r = [cost(f, "all-reduce", s).time / cost(f, "all-reduce", s, runtime="symmetric-memory").time
         for s in ("1KiB", "1MiB", "1GiB")]
    assert (f"against NCCL on 8 H100 are {r[0]:.1f}x faster at 1 KiB, {r[1]:.1f}x at 1 MiB "
            "and even at 1 GiB") in text
    assert abs(r[2] - 1) < 0.05
