"""Kernel blocks and sums by blocks of rows, without an :math:`m\\times m` array: what the scalable path
(:mod:`tpm_models.learn.decomposition`, :mod:`tpm_models.learn.expansion`) needs of a kernel.

* :func:`group_kernel_sums`: :math:`\\sum_{j\\in g}k(x, x^j)` for every point and group (the linear terms of
  the duals and their constants);
* :func:`expansion_values`: :math:`K(X, X_{train})C` (the decision values of expansion planes);
* :func:`kernel_block`: one block :math:`K(A, B)`; :func:`self_kernel`: :math:`k(x^i, x^i)`.

Every function equals :meth:`tpm_models.kernels.Kernel.gram` applied to the whole arrays, to rounding.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from tpm_models.kernels import Kernel

BLOCK_MB = 32.0
"""Megabytes of kernel entries computed at once by :func:`group_kernel_sums` and :func:`expansion_values`."""

SUM_BLOCK_ROWS = 128
"""At most this many rows per block of the Gaussian kernel sums of :func:`group_kernel_sums` (fewer when
:data:`BLOCK_MB` says so), all computed into one buffer: at 750 points one block of every row took 3.1-3.5 ms
on one BLAS thread, fresh memory's page faults and a 4.5 MB block out of cache included, and blocks of 128
rows 1.2-1.7 ms; at 7,500 points 98-125 ms against 85-88 ms (the git log of ``docs/notes/bench-estimators.md``)."""


def self_kernel(kernel: Kernel, X: np.ndarray) -> np.ndarray:
    """:math:`k(x^i, x^i)` for every row of ``X``: 1 for the Gaussian kernel, :math:`\\|x^i\\|^2` for the linear
    one (both without :meth:`tpm_models.kernels.Kernel.diagonal`'s Gram blocks, which cost a fit's worth of
    time at 1,000 points), :meth:`~tpm_models.kernels.Kernel.diagonal` for the others."""
    if kernel.name == "gaussian":
        return np.ones(len(X))
    if kernel.name == "linear":
        return np.einsum("ij,ij->i", X, X)
    return kernel.diagonal(X)


def block_rows(m_columns: int, block_mb: float = BLOCK_MB) -> int:
    """Rows of a block of ``m_columns`` columns that fit in ``block_mb`` megabytes (at least 1)."""
    return max(1, int(block_mb * 2**20 / (8 * max(1, m_columns))))


def kernel_block(kernel: Kernel, A: np.ndarray, B: np.ndarray, sq_B: np.ndarray | None = None) -> np.ndarray:
    """:math:`K(A, B)` as :meth:`tpm_models.kernels.Kernel.gram` computes it; for the Gaussian kernel in place
    (one ``A @ B.T`` array, no temporaries of its size: the blocks here are the scalable path's main cost),
    with ``sq_B`` the squared norms of ``B``'s rows when known. Equal to ``kernel.gram(A, B)`` to rounding."""
    if kernel.name != "gaussian":
        return kernel.gram(A, B)
    inv = 1.0 / (2.0 * cast(float, kernel.sigma) ** 2)  # a Gaussian kernel has its sigma
    sq_B = (B * B).sum(axis=1) if sq_B is None else sq_B
    K = A @ B.T
    K *= 2.0 * inv
    K -= ((A * A).sum(axis=1) * inv)[:, None]
    K -= (sq_B * inv)[None, :]
    np.minimum(K, 0.0, out=K)
    return np.exp(K, out=K)


FACTOR_LIMIT = 600.0
"""The Gaussian sums use :math:`k(a,b) = f(a)f(b)e^{2\\gamma a^\\top b}` (:math:`f(x) = e^{-\\gamma\\|x\\|^2}`,
:math:`\\gamma = 1/(2\\sigma^2)`): one product and one ``exp`` per entry instead of five passes over the block.
It is used when :math:`2\\gamma\\max_i\\|x^i\\|^2 \\le` ``FACTOR_LIMIT`` (no overflow; relative error
about :math:`2\\gamma|a^\\top b|` ulps, like the distance form's), else the distance form."""


def _gaussian_factors(kernel: Kernel, *point_sets: np.ndarray) -> tuple[float, list[np.ndarray]] | None:
    """:math:`(2\\gamma, [f(X) \\text{ for each set}])` when the factored Gaussian form applies, else None."""
    if kernel.name != "gaussian":
        return None
    gamma = 1.0 / (2.0 * cast(float, kernel.sigma) ** 2)  # a Gaussian kernel has its sigma
    sqs = [(P * P).sum(axis=1) for P in point_sets]
    if 2.0 * gamma * max(float(sq.max(initial=0.0)) for sq in sqs) > FACTOR_LIMIT:
        return None
    return 2.0 * gamma, [np.exp(-gamma * sq) for sq in sqs]


def group_kernel_sums(kernel: Kernel, X: np.ndarray, groups: np.ndarray, n_groups: int, rows: np.ndarray | None = None,
                      block_mb: float = BLOCK_MB) -> np.ndarray:
    """:math:`S_{ig} = \\sum_{j:\\,g_j = g} k(x, x^j)` for every point ``x`` of ``rows`` (default ``X``) and
    every group ``g`` (the classes): shape ``(len(rows), n_groups)``, computed by blocks of rows of at most
    ``block_mb`` megabytes (no ``len(rows) x len(X)`` array). For the linear kernel it is
    :math:`x^\\top(\\sum_{j:\\,g_j=g} x^j)`, exact and :math:`O(mn)`.

    Everything the duals need of the other set comes from these sums: :math:`r = K(X_o, X_{\\bar o})e` is
    the sum of the other groups' columns over the own rows, and :math:`e^\\top K(X_{\\bar o},X_{\\bar o})e`
    their sum over the other rows.
    """
    X = np.asarray(X, dtype=float)
    onehot = np.zeros((len(X), n_groups))
    onehot[np.arange(len(X)), groups] = 1.0
    if kernel.name == "linear":
        R = X if rows is None else np.atleast_2d(np.asarray(rows, dtype=float))
        return R @ (X.T @ onehot)
    step = block_rows(len(X), block_mb)
    R = X if rows is None else np.atleast_2d(np.asarray(rows, dtype=float))
    factors = _gaussian_factors(kernel, R, X)
    if factors is not None:
        two_gamma, (f_R, f_X) = factors
        W = f_X[:, None] * onehot
        if rows is not None:
            return f_R[:, None] * _exp_products(R, X, W, two_gamma, step)
        return _symmetric_exp_sums(X, f_X, W, two_gamma, min(step, SUM_BLOCK_ROWS))
    sq = (X * X).sum(axis=1)
    if rows is not None:
        R = np.atleast_2d(np.asarray(rows, dtype=float))
        out = np.empty((len(R), n_groups))
        for s in range(0, len(R), step):
            out[s:s + step] = kernel_block(kernel, R[s:s + step], X, sq) @ onehot
        return out
    out = np.zeros((len(X), n_groups))  # K(X, X) is symmetric: blocks on and above the diagonal only
    for s in range(0, len(X), step):
        block = kernel_block(kernel, X[s:s + step], X[s:], sq[s:])  # rows s.., columns s..
        out[s:s + step] += block @ onehot[s:]
        out[s + step:] += block[:, step:].T @ onehot[s:s + step]
    return out


def _symmetric_exp_sums(X: np.ndarray, f_X: np.ndarray, W: np.ndarray, two_gamma: float, step: int) -> np.ndarray:
    """:math:`\\operatorname{diag}(f)\\,e^{2\\gamma XX^\top}W` (``W`` already scaled by :math:`f`) from the blocks of
    ``step`` rows on and above the diagonal (the matrix is symmetric), every block computed into one buffer."""
    m = len(X)
    buffer = np.empty(min(step, m) * m)
    scaled = two_gamma * X
    out = np.zeros((m, W.shape[1]))
    for s in range(0, m, step):
        rows = min(step, m - s)
        E = buffer[:rows * (m - s)].reshape(rows, m - s)
        np.matmul(scaled[s:s + rows], X[s:].T, out=E)
        np.exp(E, out=E)
        out[s:s + rows] += f_X[s:s + rows, None] * (E @ W[s:])
        out[s + rows:] += f_X[s + rows:, None] * (E[:, rows:].T @ W[s:s + rows])
    return out


def _exp_products(A: np.ndarray, B: np.ndarray, W: np.ndarray, two_gamma: float, step: int) -> np.ndarray:
    """:math:`e^{2\\gamma AB^\\top}W` by blocks of ``step`` rows of ``A``."""
    out = np.empty((len(A), W.shape[1]))
    for s in range(0, len(A), step):
        E = (two_gamma * A[s:s + step]) @ B.T
        np.exp(E, out=E)
        out[s:s + step] = E @ W
    return out


def expansion_values(kernel: Kernel, X_train: np.ndarray, coef: np.ndarray, X: np.ndarray,
                     block_mb: float = BLOCK_MB) -> np.ndarray:
    """:math:`K(X, X_{train})\\,C` for expansion coefficients ``coef`` (``(m_train, k)``), by blocks of rows:
    :math:`\\langle w,\\varphi(x)\\rangle` of (20) for every column of ``coef``. Linear kernel:
    :math:`X (X_{train}^\\top C)`."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    if kernel.name == "linear":
        return X @ (X_train.T @ coef)
    step = block_rows(len(X_train), block_mb)
    factors = _gaussian_factors(kernel, X, X_train)
    if factors is not None:
        two_gamma, (f_X, f_train) = factors
        return f_X[:, None] * _exp_products(X, X_train, f_train[:, None] * coef, two_gamma, step)
    out = np.empty((len(X), coef.shape[1]))
    sq = (X_train * X_train).sum(axis=1)
    for s in range(0, len(X), step):
        out[s:s + step] = kernel_block(kernel, X[s:s + step], X_train, sq) @ coef
    return out
