"""Session 33 (reader): Router.loads_matrix checks a traffic matrix as every other reader does.

It checked only a shape and, block by block, signs: a bool matrix was priced as 1-byte pairs,
a complex one by its real part (a ComplexWarning), text failed inside numpy, and a list of rows
was refused ("got shape None"). The one check, ``traffic_values``, moved from analysis to
``fabric._arrays`` (fabric imports no analysis: DESIGN.md), and the router asks it.
``analysis.expected_max_active`` and the plots of values (``plot_latency_cdf``,
``plot_link_utilization``) took their arrays with ``np.asarray``: a bool was probability 1 or
one second. They ask ``fabric._arrays.real_array``, the one check of an array of numbers.
"""

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from degrade import built

from analysis import expected_max_active, plot_latency_cdf, plot_link_utilization


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


@pytest.mark.parametrize("active, owner, chips, error, says", [
    ([0.5, True], [0, 1], 2, TypeError, r"active\[1\] must be a number, got active\[1\]=True"),
    ([0.5, 0.5], [0, 1.7], 2, TypeError, "owner must be integers in 0..1"),   # was chip 1
    ([0.5, 0.5], [0, 2], 2, ValueError, "owner must be integers in 0..1 .*got owner=2"),
    ([0.5, 2.0], [0, 1], 2, ValueError, r"probabilities in \[0, 1\], got active\[1\]=2.0"),
    ([0.5, 0.5, 0.5], [0, 1], 2, ValueError, r"got shapes \(3,\) and \(2,\)"),    # was cut
    ([0.5, 0.5], [0, 1], True, TypeError, "chips must be an integer >= 1")])
def test_expected_max_active_refuses_what_it_read_silently(active, owner, chips, error, says):
    with pytest.raises(error, match=says):
        expected_max_active(active, owner, chips)
    assert expected_max_active(np.array([0.5, 0.5]), [0, np.int64(1)], np.int64(2)) == 0.75


@pytest.mark.parametrize("plot, name", [(plot_latency_cdf, "samples"),
                                        (plot_link_utilization, "utilization")])
@pytest.mark.parametrize("values, says", [
    ([1e-6, True], r"\['a'\]\[1\] must be a number, got .*=True \(a bool\)$"),
    (np.ones(3, dtype=bool), r"\['a'\] must be .*, got booleans"),
    (["1us"], r"\['a'\] must be .*, got text")])
def test_plotted_values_are_numbers(plot, name, values, says):
    with pytest.raises(TypeError, match=f"^{name}{says}"):
        plot({"a": values})
