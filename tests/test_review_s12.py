"""Review, session 12: faults the reviewer confirmed that no other test pins down, kept as
strict xfails with their reasons (as a missed row is) until their owners fix them.

S12-R2 (models, analysis/_decode.py): ``hbm_efficiency``'s default was recognised by float
equality, and any other given value replaced every published per-kernel streaming rate
(FlashMLA's, DeepGEMM's FP8, the NVFP4 GEMMs'), so a sweep of given values stepped at 0.78:
a given efficiency a hair above it gave a slower step than 0.78 itself. FIXED in session 13
(models): the default is ``None`` (the published rates, as ``compute_efficiency``'s None is
the published efficiencies) in decode_step and serving's prefill_time together; a given
value, 0.78 included, is every read's fraction, so a sweep has no step.

S12-R4 (audit, fabric/_routing.py "Failures under dimension order"): the link-by-link repair of
a failed chip on a grid (session 12, S11-R5) was claimed monotone only while no two failed
chips are neighbours. Two neighbouring failed chips made the survivors' work faster:
torus:2x2x3 without chip10 and chip6, a reduce-scatter of 16 MiB over chip2, chip11, chip9
(one-shot, runtime ideal) took 186.4 us intact and 93.8 us degraded, because chip2 had no
live link as narrow as its dead 64 GB/s links to chip10 (and chip6), so the stand-in was a
128 GB/s link. FIXED in session 13 (audit): every link of a run through failed nodes has a
stand-in link no wider and no faster, near it if not at its live end
(tests/test_audit_s13_routing.py); this test was a strict xfail until then.
"""


import analysis
import topologies
from analysis import DECODE_HBM_EFFICIENCY


def test_a_step_does_not_jump_at_the_default_hbm_efficiency():
    # a hair more HBM efficiency than 0.78 must not make a step measurably slower. The
    # default is now a mode of its own (None, as compute_efficiency's): the published
    # per-kernel rates, not a point of the sweep; so the sweep's point at 0.78 is the GIVEN
    # 0.78 (every read at 0.78), and the default is checked to be its own mode below
    f = topologies.build("switch:8,chip=h200")
    kw = {"batch": 64, "context": 2048, "layout": "tp=8", "engine": "trtllm"}
    at = analysis.decode_step("deepseek-r1", f, **kw,
                              hbm_efficiency=DECODE_HBM_EFFICIENCY.value)
    given = analysis.decode_step("deepseek-r1", f, **kw,
                                 hbm_efficiency=DECODE_HBM_EFFICIENCY.value + 1e-9)
    assert given.time <= at.time * (1 + 1e-6)
    below = analysis.decode_step("deepseek-r1", f, **kw,
                                 hbm_efficiency=DECODE_HBM_EFFICIENCY.value - 1e-9)
    assert at.time <= below.time * (1 + 1e-6)
    # not given: DeepGEMM's FP8 rate for the dense GEMMs on Hopper (and FlashMLA's); given
    # 0.78: none of them (a user's fraction is every read's)
    default = analysis.decode_step("deepseek-r1", f, **kw)
    pub = "gemm.decode_hbm_efficiency.hopper.fp8"
    assert pub in {p.name for p in default.parameters}
    assert pub not in {p.name for p in at.parameters}
    assert default.time != at.time


def test_two_neighbouring_failed_chips_do_not_make_the_survivors_faster():
    f = topologies.build("torus:2x2x3,chip=h100")
    g = f.without(chips=["chip10", "chip6"])
    assert "chip6" in f.graph["chip10"]            # neighbours (claimed since session 13)
    ranks = ["chip2", "chip11", "chip9"]
    intact = analysis.cost(f, "reduce-scatter", 2**24, ranks=ranks, runtime="ideal")
    degraded = analysis.cost(g, "reduce-scatter", 2**24, ranks=ranks, runtime="ideal")
    assert degraded.time >= intact.time * (1 - 1e-12)
