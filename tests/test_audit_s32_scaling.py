"""Audit session 32: ``cofabric scaling --sizes 2`` of a 3-D family (and a layout's derived dp).

The hyperx and torus families took the cube root of the size, rounded: a size of 2 or 3 gave a
1 x 1 x 1 build of one chip, and the study failed inside with "traffic needs at least 2
endpoints, got 1", naming neither the size nor the family. They now take their smallest 3-D
build, 2 x 2 x 2, as fat-tree (k=4), rail (one server) and dragonfly (h=1) take theirs.
"""
import pytest

from analysis import scaling_study


@pytest.mark.parametrize("size", [2, 3])
def test_a_3d_family_below_its_smallest_build_takes_2x2x2(size):
    rows = scaling_study(["hyperx", "torus"], [size], collective_limit=0, decode_limit=0)
    assert [(r["spec"], r["chips"]) for r in rows] == [
        ("hypermesh:2x2x2,chip=h100", 8), ("torus:2x2x2,chip=h100", 8)]


def test_a_dp_the_layout_did_not_give_is_named_as_derived():
    # 'tp=8,ep=8,etp=8' on 8 chips was refused with "got tp=8, dp=8": a dp nobody wrote
    from analysis._decode import parse_layout
    from fabric import SpecError

    with pytest.raises(SpecError, match=r"got tp=8, dp=8 \(not given: ep x etp / tp = "
                                        r"8 x 8 / 8\)$"):
        parse_layout("tp=8,ep=8,etp=8", 8)
    with pytest.raises(SpecError, match=r"got tp=2, dp=4$"):
        parse_layout("tp=2,dp=4,etp=2", 8)
