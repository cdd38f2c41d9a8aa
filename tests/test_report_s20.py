"""Session 20 (report): what a reader sees. A findings group's shared trailing assumptions
said once under the group (the scaling findings repeated their 'H100 chips everywhere. Report
run: about 64, 512, 4,096 chips ...' five times, the serving findings a 260-character tail of
decode settings three times after heads that differ by a few words)."""

import html

from hypothesis import example, given
from hypothesis import strategies as st

from analysis._report_render import (
    SHARED_TAIL,
    SHARED_TAIL_POINTER,
    findings_as_shown,
    shared_tail,
)

_WORDS = st.sampled_from(["the links", "H100 chips", "no overlap", "kimi-k2 (1024; 1024)",
                          "the decode model's settings (CUDA graphs; floors)",
                          "assumed (no published figure): a, b", "report run: 64, 512"])
_PARTS = st.lists(_WORDS, min_size=1, max_size=4)


def _finding(head, parts):
    return head if parts is None else f"{head} Assumes: {'; '.join(parts)}."


@st.composite
def _groups(draw):
    """Findings with or without a clause; often a common run of parts at their end."""
    common = draw(st.lists(_WORDS, max_size=5))
    out = []
    for i in range(draw(st.integers(1, 6))):
        if draw(st.booleans()) and i:
            out.append(f"F{i} is {i}x.")
            continue
        own = draw(st.lists(_WORDS, max_size=3))
        out.append(_finding(f"F{i} is {i}x.", own + common if own or common else ["x"]))
    return tuple(out)


def _longest_tail(group):
    """The brute-force reference: the longest suffix of the first clause that every clause
    is, or ends with after a '; ' outside parentheses."""
    clauses = [s.partition(" Assumes: ")[2] for s in group if " Assumes: " in s]
    for start in range(len(clauses[0]) + 1 if len(clauses) >= 2 else 0):   # longest first
        cand = clauses[0][start:]
        heads = [c[:-len(cand)] for c in clauses]
        if cand and all(c.endswith(cand) and (h == "" or (
                h.endswith("; ") and h.count("(") == h.count(")")))
                        for c, h in zip(clauses, heads)):
            return cand
    return ""


_A = "assumed (no published figure): a, b"


@given(_groups())
# found by the random profile in session 27: saying the tail once saved exactly the space
# after the note's introduction, so the page was no shorter (258 against 258 characters)
@example(tuple(f"F{i} is {i}x. Assumes: {_A}; {_A}; {_A}." for i in range(2)))
def test_a_shared_tail_is_said_once_and_every_finding_reads_back_whole(group):
    shown, tail = shared_tail(group)
    assert len(shown) == len(group)
    if not tail:
        assert shown == group
        return
    page = sum(map(len, shown)) + len(SHARED_TAIL) + 1 + len(tail)
    assert page < sum(map(len, group))                  # only where it shortens the page
    for finding, line in zip(group, shown):
        if line == finding:                             # no clause: left as written
            assert " Assumes: " not in finding
            continue
        assert line.endswith(SHARED_TAIL_POINTER) and tail not in line
        assert line[:-len(SHARED_TAIL_POINTER)] + tail == finding
    # the longest run of whole parts the clauses share (never a cut inside a part)
    assert tail == _longest_tail(group)


def test_the_scaling_and_serving_tails_are_said_once():
    t = ("h100 chips everywhere; the decode model's settings (CUDA-graph replay, published "
         "kernel floors and HBM streaming rates, each system's MoE exchange kernel) with the "
         "collectives under the runtime 'nccl'; and the link bandwidths and latencies.")
    one = "One user gets 118 tokens/s. Assumes: kimi-k2, plain decoding (no MTP; no draft)"
    group = (f"{one}, no kernel fusion, no overlap; {t}",
             f"490 tokens/s: not reached. Assumes: kimi-k2, no overlap; {t}",
             "The seed's 5.85ms, with the assumptions it needs: one user; 'nccl'.")
    shown, note = findings_as_shown(group)
    assert note == f"{SHARED_TAIL} {t}"
    assert shown[0] == f"{one}, no kernel fusion, no overlap; {SHARED_TAIL_POINTER}"
    assert shown[1] == f"490 tokens/s: not reached. Assumes: kimi-k2, no overlap; {SHARED_TAIL_POINTER}"
    assert shown[2] == group[2]


def test_every_finding_reads_back_whole_from_the_page(small_report, small_report_dir):
    text = (small_report_dir / "index.html").read_text(encoding="utf-8")
    md = (small_report_dir / "report.md").read_text(encoding="utf-8")
    tails = 0
    for _, group in small_report.finding_groups:
        shown, tail = shared_tail(group)
        sentences, note = findings_as_shown(group)
        for line in sentences:
            assert f"<li>{html.escape(line)}</li>" in text and f"- {line}\n" in md
        if note:
            assert f'<p class="assumes">{html.escape(note)}</p>' in text and f"\n{note}\n" in md
        if tail and note.startswith(SHARED_TAIL):
            tails += 1
            assert sentences == shown
            for finding, line in zip(group, shown):
                assert finding == line or line[:-len(SHARED_TAIL_POINTER)] + tail == finding
    assert tails, "the small report has a group (scaling) whose findings share a tail"
