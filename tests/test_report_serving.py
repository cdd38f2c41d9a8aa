"""The report's serving section: frontier figure, cost table, seed claims, timing-free."""

import analysis
from analysis._report_serving import MATCHED_INTERACTIVITY, _serving_findings

NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


def test_serving_section_on_one_node(tmp_path):
    r = analysis.build_report([NODE], sections=("serving",), quiet=True)
    sec = next(s for s in r.sections if s.key == "serving")
    table = next(t for t in sec.tables if t.name == "serving")
    (row,) = table.rows
    assert row["system"] == NODE and row["usd_per_gpu_hour"] == 1.95
    assert row["single_user_tokens_per_s"] > 0 and row["single_user_limiter"]
    # cost at matched interactivity follows the closed form from the same frontier point
    for x in MATCHED_INTERACTIVITY:
        y = row[f"tokens_per_s_gpu_at_{x:g}"]
        if y is not None:
            assert row[f"usd_per_mtok_at_{x:g}"] == analysis.cost_per_million_tokens(y, 1.95)
    data = next(t for t in sec.tables if t.name == "serving_frontier")
    assert not data.rows                      # CSV only: not printed in the report
    assert data.csv_rows and all(p["system"] == NODE for p in data.csv_rows)
    assert [f.name for f in sec.figures] == ["serving-frontier"]
    assert any("tokens/s" in s for s in r.findings)
    for g in (analysis.GRAPH_KERNEL_OVERHEAD, analysis.GEMM_FIXED_TIME):
        assert f"{g.value * 1e6:g} us [{g.source.split(':')[0]}]" in " ".join(sec.text)
    fig = sec.figures[0].draw()
    assert fig.axes[0].get_xlabel() == "tokens/s per user"
    analysis.write_report(r, tmp_path / "rep")
    assert (tmp_path / "rep" / "serving.csv").exists()
    assert (tmp_path / "rep" / "figures" / "serving-frontier.png").exists()


def test_seed_finding_says_which_assumption_reaches_the_claim():
    rows = [{"system": "a", "single_user_tokens_per_s": 300.0, "single_user_layout": "tp=8",
             "single_user_limiter": "weights read", **{f"usd_per_mtok_at_{x:g}": None
                                                      for x in MATCHED_INTERACTIVITY}}]
    seed = [{"case": "defaults", "tpot_s": 9e-3, "limiter": "launch/graph"},
            {"case": "fusion", "tpot_s": 5e-3, "limiter": "weights read"}]
    text = " ".join(_serving_findings(rows, seed, NODE))
    assert "reached with fusion" in text and "490" in text
    seed[1]["tpot_s"] = 7e-3
    assert "not reached" in " ".join(_serving_findings(rows, seed, NODE))


def test_serving_prose_closes_every_parenthesis_it_opens():
    # the decode-settings sentence ended "no overlap)." with nothing open, and the 490
    # tokens/s finding nested "(plain decoding only (...), ...)"
    r = analysis.build_report([NODE], sections=("serving",), quiet=True)
    sec = next(s for s in r.sections if s.key == "serving")
    for line in (*sec.text, *r.findings):
        depth = 0
        for ch in line:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            assert depth >= 0, line
            assert depth <= 1 or "[" in line, line     # no parenthesis inside another
        assert depth == 0, line
