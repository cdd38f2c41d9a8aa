"""Audit, session 16: the link count a builder checks against MAX_LINKS is the fabric it builds.

Property against a brute force (the built graph's lanes, what ``metrics`` counts as links):
every builder's count handed to ``topologies._common.check_size`` before it builds equals the
sum of the built graph's edge lanes, over random specs of every family (per-dimension
connections and lanes, 2-rings whose one edge bundles both ways, switch planes with their own
lanes, rail scale-up bundles, leaf-spine and rail spine bundles, dragonfly). A builder whose
count missed a bundle's lanes would let a spec past the limit that the graph schema refuses.
"""

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import topologies
import topologies._common as common


@st.composite
def _specs(draw):
    family = draw(st.sampled_from(["hypermesh", "switched", "rail", "leafspine", "fattree",
                                   "dragonfly"]))
    if family == "hypermesh":
        shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
        connect = draw(st.lists(st.sampled_from(["full", "ring", "line", "switch"]),
                                min_size=len(shape), max_size=len(shape)))
        links = draw(st.lists(st.integers(1, 5), min_size=len(shape), max_size=len(shape)))
        return topologies.hypermesh, {"shape": tuple(shape), "connect": tuple(connect),
                                      "links": tuple(links)}
    if family == "switched":
        planes = draw(st.integers(1, 4))
        links = draw(st.one_of(st.integers(1, 9),
                               st.lists(st.integers(1, 9), min_size=planes, max_size=planes)
                               .map(tuple)))
        return topologies.switched, {"n": draw(st.integers(1, 9)), "planes": planes,
                                     "links": links}
    if family == "rail":
        servers = draw(st.integers(1, 4))
        return topologies.rail_optimized, {
            "servers": servers, "gpus_per_server": draw(st.sampled_from([1, 2, 4, 8])),
            "scaleup_links": draw(st.integers(1, 18)),
            "spines": draw(st.sampled_from([d for d in range(1, servers + 1) if servers % d == 0]))}
    if family == "leafspine":
        k = draw(st.sampled_from([4, 8, 12, 16]))
        over = draw(st.sampled_from([r for r in (1, 2, 3) if k % (r + 1) == 0]))
        return topologies.leaf_spine, {"k": k, "oversubscription": over}
    if family == "fattree":
        return topologies.fat_tree, {"k": draw(st.sampled_from([2, 4, 6]))}
    return topologies.dragonfly, {"h": draw(st.integers(1, 2))}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_specs())
@example((topologies.hypermesh, {"shape": (2, 3), "connect": ("ring", "ring"), "links": (2, 1)}))
@example((topologies.switched, {"n": 4, "planes": 2, "links": (1, 7)}))
@example((topologies.rail_optimized, {"servers": 2, "gpus_per_server": 4, "scaleup_links": 18,
                                      "spines": 2}))
def test_the_checked_link_count_is_the_built_lanes(spec):
    builder, kwargs = spec
    seen = []
    real = common.check_size
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(common, "check_size", lambda n, links, what: (seen.append(links),
                                                                  real(n, links, what)))
        f = builder(**kwargs)
    assert len(seen) == 1
    assert seen[0] == int(f.edge_arrays.lanes.sum()), (kwargs, seen)
