"""Session 38 (audit): degraded fabrics and answers left silently wrong by session 37 (F14)."""


import topologies


def _degraded(spec="switch:8,chip=h100"):
    """A fabric with a failed link AND a failed chip (degraded fabrics are first-class)."""
    f = topologies.build(spec)
    link = next((u, v) for u, v in f.graph.edges if "chip1" in (u, v))
    return f.without(links=[link], chips=["chip3"])


def test_a_degraded_fabric_on_another_chip_is_built_of_that_chip():
    """Fabric.with_chip swapped the live copy's chip and left its ``intact`` fabric (the
    machine as built, which bill_of_materials prices) on the old one: a degraded H100 switch
    swapped to B200 was priced with the H100's 700 W a chip (1,275 W a chip of system where
    the intact B200 fabric's is 1,575 W). The report's sensitivity swap of the reduction
    rate (analysis._report_fair._with) wrote the chip by hand and kept the old chip's figures
    in the assumptions; it is the one swap now."""
    import dataclasses

    from analysis import bill_of_materials
    from analysis._report_fair import _with
    g = _degraded().with_chip("b200")
    assert g.chip.name == g.intact.chip.name == "b200"
    built = topologies.build("switch:8,chip=h100").with_chip("b200")
    assert (bill_of_materials(g).system_w_per_chip
            == bill_of_materials(built).system_w_per_chip)
    h = _with(_degraded(), None, "reduce_rate", 2.0)
    rate = 2.0 * topologies.build("switch:8,chip=h100").chip.reduce_rate
    assert h.chip.reduce_rate == h.intact.chip.reduce_rate == rate
    assert [p.value for p in h.assumptions if p.name == "h100.reduce_rate"] == [rate]
    assert dataclasses.replace(h.chip, reduce_rate=1.0).name == "h100"
