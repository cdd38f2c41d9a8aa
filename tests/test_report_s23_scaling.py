"""Report, session 23: the scaling study says where its decode instance sits.

`cofabric scaling`'s dragonfly decode point at about 4k chips (h=6) was 19.9 ms against
11.5 ms at h=3 and 11 ms at h=8, with nothing in the table to say why: the instance's first
128 chips span two groups (72 + 56 chips) joined by one global link, and a dragonfly is
routed minimally. The study keeps its placement (the decode model's own, the same on every
family) and each row now says what the instance spans (:func:`analysis._scaling.instance_span`),
checked here against a count from the builder's own layout and the fabric's graph.
"""

import math

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

import topologies
from analysis._decode import instance_chips
from analysis._scaling import instance_span


def _brute_dragonfly(f, chips):
    """(chips per group spanned, live global links between those groups), from the builder's
    documented layout (chip r on group r // (a p)) and the router names of the graph."""
    s = f.structure
    per = {}
    for c in chips:
        g = f.rank_of[c] // (s.a * s.p)
        per[g] = per.get(g, 0) + 1
    links = 0
    for u, v in f.graph.edges():
        if str(u).startswith("r") and str(v).startswith("r"):
            gu, gv = int(u[1:].split(".")[0]), int(v[1:].split(".")[0])
            links += gu != gv and gu in per and gv in per
    return [per[g] for g in sorted(per)], links


def test_h6_instance_is_two_groups_joined_by_one_global_link():
    # the study's 4k-chip dragonfly: the instance decode gives 128 chips lands on groups 0, 1
    f = topologies.build("dragonfly:h=6,chip=h100")
    chips = [f.endpoints[i] for i in instance_chips(f, 128)]
    assert _brute_dragonfly(f, chips) == ([72, 56], 1)
    assert instance_span(f, chips) == "2 of 73 groups (72 + 56 chips), 1 global link"


@settings(max_examples=25, deadline=None)
@given(h=st.integers(1, 3), a_extra=st.integers(0, 2), p=st.integers(1, 3),
       data=st.data())
def test_dragonfly_span_matches_brute_force_intact_and_degraded(h, a_extra, p, data):
    a = h + a_extra + 1
    f = topologies.build(f"dragonfly:h={h},a={a},p={p}")
    k = data.draw(st.integers(1, f.n_endpoints), label="chips")
    chips = f.endpoints[:k]
    if data.draw(st.booleans(), label="fail a global link"):
        glob = [(u, v) for u, v in f.graph.edges()
                if str(u).startswith("r") and str(v).startswith("r")
                and u.split(".")[0] != v.split(".")[0]]
        u, v = data.draw(st.sampled_from(glob), label="link")
        f = f.without(links=[f"{u}-{v}"])
    sizes, links = _brute_dragonfly(f, chips)
    text = instance_span(f, chips)
    total = f.structure.groups
    assert text.startswith(f"all {total} groups" if len(sizes) == total
                           else f"{len(sizes)} of {total} groups")
    if len(sizes) == 1:
        assert text.endswith("no global link")
    else:
        assert text.endswith(f", {links} global link" + ("s" if links != 1 else ""))
        # the chips per group, read back from the text, are the brute-force counts
        inside = text[text.index("(") + 1:text.index(")")]
        if inside.endswith(" chips each"):
            read = [int(inside.split()[0])] * len(sizes)
        else:
            read = []
            for part in inside.removesuffix(" chips").split(" + "):
                n, _, v = part.rpartition(" x ")
                read += [int(v)] * (int(n) if n else 1)
        assert read == sizes


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(2, 5), min_size=2, max_size=3), data=st.data())
def test_grid_span_is_the_bounding_block_of_the_chips(shape, data):
    f = topologies.build("torus:" + "x".join(map(str, shape)))
    k = data.draw(st.integers(1, f.n_endpoints), label="chips")
    chips = f.endpoints[:k]
    coords = [f.graph.nodes[c]["coord"] for c in chips]
    ext = [max(c[d] for c in coords) - min(c[d] for c in coords) + 1
           for d in range(len(shape))]
    block, whole = "x".join(map(str, ext)), "x".join(map(str, shape))
    want = (f"all of {whole}" if k == f.n_endpoints
            else f"{block} block of {whole}" if math.prod(ext) == k
            else f"{k} chips within {block} of {whole}")
    assert instance_span(f, chips) == want


@pytest.mark.parametrize("spec,k,want", [
    ("rail:servers=8,gpus=8", 24, "3 of 8 servers (8 chips each)"),
    ("fattree:k=4", 5, "2 of 4 pods (4 + 1 chips)"),
    ("fattree:k=4", 3, "1 of 4 pods (3 chips)"),
    ("fattree:k=4", 16, "all 4 pods (4 chips each)"),
    ("rail:servers=1,gpus=8", 8, "the one server (8 chips)"),
])
def test_clos_span_counts_groups(spec, k, want):
    f = topologies.build(spec)
    assert instance_span(f, f.endpoints[:k]) == want


def test_study_row_describes_the_instance_its_decode_ran_on():
    # the row's span is of the chips the decode step ran on (not of a second placement)
    from analysis._fair import best_decode_layout
    from analysis._report_decode import report_decode_settings
    from analysis._scaling import DECODE_CHIPS, scaling_study

    (row,) = scaling_study(("dragonfly",), (512,), collective_limit=0, decode_limit=512)
    f = topologies.build(row["spec"])
    step, _ = best_decode_layout("kimi-k2", f, batch=1, context=4096, ep=DECODE_CHIPS,
                                 **report_decode_settings(f))
    assert row["decode_step_s"] == step.time
    assert row["decode_instance"] == instance_span(f, step.instance)
    assert _brute_dragonfly(f, step.instance) == ([18] * 7 + [2], 28)


def test_table_and_markdown_say_the_placement():
    from analysis._cli_scaling import _markdown
    from analysis._report_scaling import scaling_columns, scaling_placement

    cols = {c.key: c for c in scaling_columns()}
    assert cols["decode_instance"].fmt(None) == "n/a"
    row = {c: None for c in cols} | {"family": "dragonfly", "chips": 5256, "spec": "s",
                                      "note": "", "decode_instance": "2 of 73 groups"}
    md = _markdown([row])
    assert scaling_placement() in md and "| decode instance |" in md
    assert "| 2 of 73 groups |" in md
    assert "routed minimally" in scaling_placement()


def test_the_scaling_cli_decode_figure_says_where_its_instance_sits():
    # cofabric scaling's decode figure showed the dragonfly's h=6 spike with nothing saying
    # the instance is the first 128 chips (scaling.md says what they span)
    from analysis._cli_scaling import _drawer
    from analysis._style import paper_style

    rows = [{"family": "dragonfly", "chips": n, "decode_step_s": t}
            for n, t in ((342, 11.46e-3), (5256, 19.92e-3))]
    with paper_style("single"):
        fig = _drawer(rows, "decode_step_s")()
    title = fig.axes[0].get_title()
    assert title.startswith("collectives: NCCL 2."), title
    assert title.endswith("\ninstance: the first 128 chips (what they span: scaling.md)"), title
    fig.canvas.draw()                                   # the title's lines stay in the figure
    box = fig.axes[0].title.get_window_extent()
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height
