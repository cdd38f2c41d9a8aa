"""Blackwell's HBM load latency from a B200 pointer chase (session 30, moe).

Until session 30 ``exchange.latency.blackwell.hbm_load`` carried Hopper's 689 cycles (RRZE's
gh200.txt) to Blackwell, a named assumption. markdewing/AI_kernels publishes one chase run on both
generations (latency/cuda/latency.cu: one thread chases a random permutation of a set's 128-B
lines from line 0, i.e. its cycle through line 0, ~87% of the lines (review S30-R2), clock64 over
2^25 dependent loads; latency/data/*.dat, cycles per load by working set). Its
GH200 run reproduces RRZE's DRAM plateau (687.7-689.8 against 688.8-689.2 cycles), so the two
methods agree there; its B200 run gives 858.8-859.5 cycles at the same working sets. The Parameter
is the 1488 MiB set's 859.45 cycles at the one Blackwell clock the model converts every cycle count
with (``exchange.latency.blackwell.cycle``, 1980 MHz). The same chase finds B200's and GH200's L1
hit equal (39.625 cycles), which supports carrying Hopper's L1 hit (no number moves there).
"""

import pytest
from degrade import built, degrade
from hypothesis import HealthCheck, given, settings

from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, FabricError

#: (working set bytes, cycles per load) of markdewing/AI_kernels latency/data at b6bc5634, the
#: four largest sets (DRAM: 572-1488 MiB)
_B200 = ((599838964, 856.746), (825103580, 857.955), (1134964476, 858.846),
         (1561191100, 859.45))
_GH200 = ((599838964, 685.572), (825103580, 687.436), (1134964476, 687.663),
          (1561191100, 689.796))
#: the L1 plateau of both runs (0.25-202 KiB): the same cycles on both generations
_L1 = {"b200": (39.6251, 39.6455), "gh200": (39.625, 39.6404)}

_KW = {"kernel": "one-sided", "dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}


def test_blackwell_hbm_load_is_the_b200_chase_at_the_blackwell_clock():
    bw, hop = EXCHANGE_LATENCY["blackwell"], EXCHANGE_LATENCY["hopper"]
    # the largest set's cycles, at the clock every Blackwell cycle count converts with
    assert bw["hbm_load"].value == pytest.approx(_B200[-1][1] * bw["cycle"].value, rel=1e-12)
    assert bw["hbm_load"].value == pytest.approx(859.45 / 1.98e9, rel=1e-12)
    src = bw["hbm_load"].source
    assert "markdewing/AI_kernels" in src and "B200" in src and "859.45" in src
    assert not src.startswith("assumption")
    # the same chase's GH200 run agrees with the Hopper figure (RRZE's) at those sets
    hopper_cycles = hop["hbm_load"].value / hop["cycle"].value
    assert all(abs(c / hopper_cycles - 1) < 0.005 for _, c in _GH200[1:])
    # B200's plateau is flat to 0.3% over the sets, and above Hopper's by a quarter
    assert max(c for _, c in _B200) / min(c for _, c in _B200) < 1.004
    assert 1.2 < bw["hbm_load"].value / hop["hbm_load"].value < 1.3
    # the L1 hit the same chase measures is one figure on both: Hopper's stays carried
    assert abs(_L1["b200"][0] - _L1["gh200"][0]) < 0.01
    assert bw["l1_hit"].value == hop["l1_hit"].value
    assert bw["l1_hit"].source.startswith("assumption") and "AI_kernels" in bw["l1_hit"].source


def test_one_sided_dispatch_pays_the_b200_dram_latency_per_cold_load():
    """blog18's harness flushes L2 before each dispatch: the one-sided dispatch's eight cold
    loads at 8 destinations of a BF16 token (epoch, expert ids, 4 copy rounds, 2 small
    payloads) cost 859.45 cycles at 1980 MHz each, not an L2 hit's 150 ns."""
    f = built("gb200-nvl72")
    cold = moe_exchange(f, "deepseek-v3", 1, 8, **_KW)
    warm = moe_exchange(f, "deepseek-v3", 1, 8, l2_flushed=False, **_KW)
    assert cold.dispatch - warm.dispatch == pytest.approx(8 * (434.0656566e-9 - 150e-9),
                                                          rel=1e-8)
    assert cold.combine == warm.combine


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degrade(built("gb200-nvl72"), max_links=2, max_chips=0))
def test_cold_loads_cost_the_same_on_a_degraded_fabric(f):
    """The chain's cold loads are the GPU's own work: cutting links changes the paths, not what
    a cold load costs over a warm one."""
    try:
        cold = moe_exchange(f, "deepseek-v3", 1, 8, **_KW)
        warm = moe_exchange(f, "deepseek-v3", 1, 8, l2_flushed=False, **_KW)
    except FabricError:
        return
    assert cold.dispatch - warm.dispatch == pytest.approx(8 * (859.45 / 1.98e9 - 150e-9),
                                                          rel=1e-8)
