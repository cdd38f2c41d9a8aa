"""Session 33 (reader): Router.loads_matrix checks a traffic matrix as every other reader does.

It checked only a shape and, block by block, signs: a bool matrix was priced as 1-byte pairs,
a complex one by its real part (a ComplexWarning), text failed inside numpy, and a list of rows
was refused ("got shape None"). The one check, ``traffic_values``, moved from analysis to
``fabric._arrays`` (fabric imports no analysis: DESIGN.md), and the router asks it.
"""

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from degrade import built


@functools.cache
def _fabrics():
    intact = built("torus:4x4")
    return intact, intact.without(chips=["chip5"])


@pytest.mark.parametrize("degraded", [False, True])
@pytest.mark.parametrize("matrix, error, says", [
    (lambda n: np.ones((n, n), dtype=bool), TypeError, "got booleans"),
    (lambda n: np.ones((n, n), dtype=complex), TypeError, "got complex numbers"),
    (lambda n: [["1"] * n] * n, TypeError, "got text"),
    (lambda n: [[0, True] + [0] * (n - 2)] + [[0] * n] * (n - 1), TypeError,
     r"^matrix\[0\]\[1\] must be an integer, got matrix\[0\]\[1\]=True \(a bool\)$"),
    (lambda n: sp.csr_matrix(np.ones((n, n), dtype=bool)), TypeError, "sparse matrix of bool"),
    (lambda n: np.full((n, n), np.nan), ValueError, r"not finite byte counts >= 0 \(\[0, 0\]"),
    (lambda n: np.ones((n + 1, n)), ValueError, r"got an array of shape \(\d+, \d+\)$")])
def test_a_bad_matrix_is_refused_naming_what_is_wrong(degraded, matrix, error, says):
    f = _fabrics()[degraded]
    n = f.n_endpoints
    with pytest.raises(error, match=says) as e:
        f.router.loads_matrix(matrix(n))
    if not says.startswith("^"):        # an entry by position names itself
        assert e.match(rf"^matrix must be a traffic matrix \({n} x {n} bytes for ")


@pytest.mark.parametrize("degraded", [False, True])
def test_every_form_of_one_matrix_gives_the_same_loads(degraded):
    f = _fabrics()[degraded]
    n = f.n_endpoints
    m = np.arange(n * n, dtype=float).reshape(n, n) % 7
    want = f.router.loads_matrix(m)
    assert want.sum() > 0
    for form in (m.tolist(), m.astype(np.int64), sp.csr_matrix(m)):
        assert np.array_equal(f.router.loads_matrix(form), want)
