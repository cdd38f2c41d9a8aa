"""Session 32 (reader): the router's byte counts are numbers, not flags or text.

``Router._pairs`` read ``nbytes`` with ``np.asarray(nbytes, dtype=float)``: True was 1 B,
'1000' 1000 B, [1000.0, True] [1000, 1] B, and None (``loads(src, dst, None)``) answered
Python's "not enough values to unpack". Each is a TypeError naming nbytes now (STYLE's rule).
"""

import numpy as np
import pytest
from degrade import built


@pytest.mark.parametrize("nbytes, named", [
    (True, r"got True \(a bool\)"), ("1000", r"got '1000' \(a str\)"),
    (None, r"got None \(a NoneType\)"), (np.array([True, False]), r"\(a ndarray\)"),
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
