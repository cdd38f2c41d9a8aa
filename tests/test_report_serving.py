"""The report's serving section: frontier figure, cost table, seed claims, timing-free."""

import analysis
import fabric
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
        assert f"{fabric.format_time(g.value)} [{g.source.split(':')[0]}]" in " ".join(sec.text)
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


def test_claims_are_read_with_their_assumptions_and_arithmetic():
    # the 490 tokens/s and 5.85 ms findings name what they assume and what the claim would
    # need, from the point's own per-token shares (seconds)
    shares = {"weights read": 1e-3, "KV read": 0.5e-3, "launch/graph": 2e-3,
              "kernel floors": 1e-3, "communication": 3e-3, "compute": 0.0, "draft": 0.0,
              "prefill": 0.0}
    rows = [{"system": "a", "single_user_tokens_per_s": 1 / 7.5e-3, "single_user_layout": "tp=8",
             "single_user_limiter": "communication", "single_user_shares": shares,
             **{f"usd_per_mtok_at_{x:g}": None for x in MATCHED_INTERACTIVITY}}]
    seed = [{"case": "defaults", "tpot_s": 9e-3, "limiter": "weights read",
             "shares": {"weights read": 4e-3, "communication": 3e-3, "launch/graph": 2e-3}},
            {"case": "fusion", "tpot_s": 6.0e-3, "limiter": "weights read",
             "shares": {"weights read": 4e-3, "communication": 1.8e-3, "launch/graph": 0.2e-3}}]
    text = " ".join(_serving_findings(rows, seed, NODE))
    # 490 tokens/s: 2.041ms a token; the reads take 1.5ms, so the other 6.0ms must fall to
    # 540.8us (every computed time at four digits, as everywhere in the report)
    assert "2.041ms per token" in text and "kernel boundaries and floors 3.000ms" in text
    assert "the other 6.000ms cut to 540.8us" in text
    # 5.85ms: 0.15ms short of the best reading, which has 1.8ms of communication
    for words in ("hypothetical 2.8T config, not the seed's model",
                  "chip figures, the seed naming no chip",
                  "no overlap of communication with compute",
                  "5.85ms is not reached: it needs 150.0us less than the best reading",
                  "e.g. that much of its communication hidden"):
        assert words in text, words
    # the reads alone above the budget: no arithmetic that would need negative time
    rows[0]["single_user_shares"] = {**shares, "weights read": 2.5e-3}
    assert "alone exceed 2.041ms" in " ".join(_serving_findings(rows, seed, NODE))
