"""Exact dimension reduction of a linear program by an equitable partition (private).

Colour refinement on the LP (Grohe, Kersting, Mladenov and Selman, "Dimension
Reduction via Colour Refinement", ESA 2014) splits the rows and the columns of
``A`` into classes such that, for every row class ``R`` and column class ``C``,
every row of ``R`` has the same sum of its coefficients in ``C`` (``alpha_RC``)
and every column of ``C`` the same sum of its coefficients in ``R``
(``beta_RC``), with right-hand sides constant on row classes and costs and
bounds constant on column classes. Then the LP

    min sum_C |C| c_C y_C   s.t.   sum_C alpha_RC y_C (<= or =) b_R,   y >= 0

has the optimum of the original: a feasible ``y`` spread over its classes
(``x_j = y_C``) is feasible with the same cost, and the class means of an
optimal ``x`` are feasible for it (summing the rows of ``R``:
``sum_C |C| beta_RC y_C = |R| sum_C alpha_RC y_C``, as ``|R| alpha_RC = |C|
beta_RC`` both count the coefficients between ``R`` and ``C``). Automorphisms
of the fabric that fix the traffic give such classes, and the refinement finds
them (and sometimes coarser ones) without being told the group.

The classes come from a multiset hash per refinement round; the final
partition is then checked to be equitable exactly, so a hash collision can
only make :func:`reduce_lp` return ``None`` (the caller solves the full LP),
never a wrong reduction.
"""

import numpy as np
import scipy.sparse as sp

__all__ = []

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(a, b):
    """A 64-bit hash of two uint64 arrays (splitmix64 finaliser)."""
    with np.errstate(over="ignore"):
        x = a * np.uint64(0x9E3779B97F4A7C15) ^ b
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
        return x ^ (x >> np.uint64(31))


def _relabel(old, sig):
    """New class ids from (old class, signature), numbered in order of first appearance."""
    key = _mix(old.astype(np.uint64), sig)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    # number classes by their first member so the result does not depend on hash values
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[np.ravel(inv)], len(first)


class _Segments:
    """Sums of uint64 values by an index that does not change (sorted once, reduced by segment)."""

    def __init__(self, idx, n):
        self.order = np.argsort(idx, kind="stable")
        si = idx[self.order]
        self.starts = np.flatnonzero(np.r_[True, si[1:] != si[:-1]]) if len(si) else si
        self.targets = si[self.starts] if len(si) else si
        self.n = n

    def sum(self, h):
        out = np.zeros(self.n, dtype=np.uint64)
        if len(self.order):
            with np.errstate(over="ignore"):
                out[self.targets] = np.add.reduceat(h[self.order], self.starts)
        return out


def _refine(rows, cols, vals, row0, col0, max_rounds=100_000):
    """Colour refinement of a sparse matrix's rows and columns from initial colours."""
    _, vid = np.unique(vals, return_inverse=True)
    vid = np.ravel(vid).astype(np.uint64) + np.uint64(1)
    rc, n_r = _relabel(row0, np.zeros(len(row0), dtype=np.uint64))
    cc, n_c = _relabel(col0, np.zeros(len(col0), dtype=np.uint64))
    by_row = _Segments(rows, len(rc))
    by_col = _Segments(cols, len(cc))
    for _ in range(max_rounds):
        rc2, n_r2 = _relabel(rc, by_row.sum(_mix(vid, cc[cols].astype(np.uint64))))
        cc2, n_c2 = _relabel(cc, by_col.sum(_mix(vid, rc2[rows].astype(np.uint64))))
        done = n_r2 == n_r and n_c2 == n_c
        rc, cc, n_r, n_c = rc2, cc2, n_r2, n_c2
        if done:
            break
    return rc, n_r, cc, n_c


def _class_sums(A, rc, n_r, cc, n_c):
    """(alpha, beta, ok): per-class coefficient sums, and whether the partition is equitable."""
    nr, nc = A.shape
    Pc = sp.csr_matrix((np.ones(nc), (np.arange(nc), cc)), shape=(nc, n_c))
    Pr = sp.csr_matrix((np.ones(nr), (np.arange(nr), rc)), shape=(nr, n_r))
    S = (A @ Pc).tocsr()  # rows x column classes
    T = (A.T @ Pr).tocsr()  # columns x row classes
    rep_r = np.zeros(n_r, dtype=np.int64)
    rep_r[rc[::-1]] = np.arange(nr)[::-1]
    rep_c = np.zeros(n_c, dtype=np.int64)
    rep_c[cc[::-1]] = np.arange(nc)[::-1]
    alpha = S[rep_r]
    beta = T[rep_c]
    ok = _rows_equal(S, alpha[rc]) and _rows_equal(T, beta[cc])
    return alpha.tocsr(), ok


def _rows_equal(X, Y):
    D = (X - Y).tocsr()
    if D.nnz == 0:
        return True
    scale = max(float(abs(X).max()), 1.0)
    return float(abs(D).max()) <= 1e-12 * scale


def reduce_lp(c, A_ub, b_ub, A_eq, b_eq):
    """Reduce ``min c x, A_ub x <= b_ub, A_eq x = b_eq, x >= 0`` by an equitable partition.

    Returns ``(c', A_ub', b_ub', A_eq', b_eq', col_class, n_classes)`` where
    ``col_class[j]`` is the class of variable ``j`` (the original ``x_j`` is
    ``y[col_class[j]]``), or ``None`` if the partition found fails the exact
    check (then solve the full LP).
    """
    A_ub = sp.csr_matrix(A_ub)
    A_eq = sp.csr_matrix(A_eq)
    m_ub, m_eq = A_ub.shape[0], A_eq.shape[0]
    A = sp.vstack([A_ub, A_eq]).tocoo()
    A.sum_duplicates()
    A.eliminate_zeros()
    rhs = np.concatenate([np.asarray(b_ub, dtype=float), np.asarray(b_eq, dtype=float)])
    kind = np.r_[np.zeros(m_ub), np.ones(m_eq)]
    _, row0 = np.unique(np.stack([kind, rhs], axis=1), axis=0, return_inverse=True)
    _, col0 = np.unique(np.asarray(c, dtype=float), return_inverse=True)
    rc, n_r, cc, n_c = _refine(A.row.astype(np.int64), A.col.astype(np.int64), A.data,
                               np.ravel(row0), np.ravel(col0))
    # row classes never mix the two kinds of rows (initial colours); split them back
    alpha, ok = _class_sums(A.tocsr(), rc, n_r, cc, n_c)
    if not ok:
        return None
    rep_r = np.zeros(n_r, dtype=np.int64)
    rep_r[rc[::-1]] = np.arange(len(rc))[::-1]
    is_eq = kind[rep_r] == 1
    size_c = np.bincount(cc, minlength=n_c)
    rep_c = np.zeros(n_c, dtype=np.int64)
    rep_c[cc[::-1]] = np.arange(len(cc))[::-1]
    c_red = np.asarray(c, dtype=float)[rep_c] * size_c
    return (c_red, alpha[np.flatnonzero(~is_eq)], rhs[rep_r[~is_eq]],
            alpha[np.flatnonzero(is_eq)], rhs[rep_r[is_eq]], cc, n_c)
