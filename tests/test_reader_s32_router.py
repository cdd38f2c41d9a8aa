"""Session 32 (reader): the router's byte counts are numbers, not flags or text.

``Router._pairs`` read ``nbytes`` with ``np.asarray(nbytes, dtype=float)``: True was 1 B,
'1000' 1000 B, [1000.0, True] [1000, 1] B, and None (``loads(src, dst, None)``) answered
Python's "not enough values to unpack". Each is a TypeError naming nbytes now (STYLE's rule).
"""

import numpy as np
import pytest
from degrade import built

from fabric._transport import transports_for


@pytest.mark.parametrize("nbytes, named", [
    (True, r"got True \(a bool\)"), ("1000", r"got '1000' \(a str\)"),
    (None, r"got None \(a NoneType\)"), (np.array([True, False]), r"got booleans: array"),
    ([1000.0, True], r"nbytes\[1\] must be a number, got nbytes\[1\]=True")])
def test_a_byte_count_of_the_wrong_kind_is_a_type_error(nbytes, named):
    r = built("torus:4x4").router
    for ask in (r.loads, lambda s, d, w: r.loads_grouped(s, d, w, [0, 0], 1)):
        with pytest.raises(TypeError, match=r"nbytes must be bytes|nbytes\[1\]") as e:
            ask([0, 1], [2, 3], nbytes)
        assert e.match(named)


def test_numbers_of_any_kind_are_the_bytes_they_are():
    r = built("torus:4x4").router
    want = r.loads([0, 1], [2, 3], 1000.0)
    for nbytes in (1000, np.int64(1000), np.float32(1000), [1000, 1000.0], np.full(2, 1000)):
        assert np.array_equal(r.loads([0, 1], [2, 3], nbytes), want)


@pytest.mark.parametrize("src, named", [
    ([0.7], "src must be node indices"), ([True], "src must be node indices"),
    (["3"], "src must be node indices"), ([0, True], r"src\[1\] must be an integer")])
def test_transports_for_reads_nodes_through_the_one_node_check(src, named):
    # np.asarray(src, dtype=np.int64) read 0.7 as node 0, True as node 1, '3' as node 3
    f = built("torus:4x4")
    with pytest.raises(TypeError, match=named):
        transports_for(f, "native", src, [5] * len(src))
    assert [t.name for t in transports_for(f, "native", [0, 1], [5, 5])] == ["loadstore"] * 2
