"""The recursive least-squares step, compiled: one block of samples per call, one sample after
another inside (the recursion is sequential; the block's regressor is built batched before).

Each sample k brings m rows ``y_k = Y_k theta + e`` (``Y_k`` (m, r)), already weighted. With
forgetting factor ``lam`` the estimate minimises ``sum_i lam^(k-i) |y_i - Y_i theta|^2``:

- *before* the information matrix ``A = sum lam^(k-i) Y_i^T Y_i`` has full rank, ``A`` and
  ``b = sum lam^(k-i) Y_i^T y_i`` are accumulated and a Cholesky factorisation is tried; it is
  accepted when every pivot keeps more than ``PIVOT_RTOL`` of its column's own weight
  (``d_j > PIVOT_RTOL A_jj``: the column's angle to the span of the others, independent of the
  units of theta). Then ``P = A^-1``, ``theta = P b``: the exact least-squares start, so that
  RLS without forgetting stays the batch least-squares estimate to rounding.
- *after*, the covariance form: ``S = lam' E + Y P Y^T``, ``K = P Y^T S^-1``,
  ``theta += K (y - Y theta)``, ``P <- (P - K Y P) / lam'``, kept symmetric, with the
  anti-windup guard: ``lam' = max(lam, trace(P) / max_trace)`` capped at 1, so forgetting
  never lifts ``trace(P / lam')`` above ``max_trace`` (a bounded-trace forgetting: when the data
  stop exciting some direction, its variance stops growing instead of winding up).

``stats`` carries ``[J, N_eff, samples, initialised, yy, max_trace]``: the weighted residual
sum of squares of the current estimate (``J <- lam' J + lam' e^T S^-1 e``, the exact recursion
of the cost's minimum), the effective row count (``N_eff <- lam' N_eff + m``), the samples
seen, 1.0 once initialised, ``sum lam^(k-i) |y_i|^2`` (to start ``J`` at initialisation), and
the guard's bound: > 0 the bound, 0 no guard, < 0 ``trace(P)`` at initialisation (set then).
"""

from __future__ import annotations

import numpy as np

from dynid._jit import kernel

# a pivot must keep this fraction of its column's weight (an angle of 1e-5 rad)
PIVOT_RTOL = 1e-10


@kernel
def _try_start(a, b, yy, theta, p, stats):
    """``P = A^-1``, ``theta = P b`` when ``A`` is numerically positive definite (see module);
    True on success."""
    r = a.shape[0]
    low = np.zeros((r, r))
    for j in range(r):
        total = a[j, j]
        for c in range(j):
            total -= low[j, c] * low[j, c]
        if not total > PIVOT_RTOL * a[j, j] or not a[j, j] > 0.0:
            return False
        low[j, j] = np.sqrt(total)
        for i in range(j + 1, r):
            total = a[i, j]
            for c in range(j):
                total -= low[i, c] * low[j, c]
            low[i, j] = total / low[j, j]
    inverse = np.linalg.inv(low)
    p[:, :] = inverse.T @ inverse
    theta[:] = p @ b
    stats[0] = max(yy - np.dot(b, theta), 0.0)
    stats[3] = 1.0
    if stats[5] < 0.0:
        stats[5] = np.trace(p)
    return True


@kernel
def rls_block(regressor, target, lam, theta, p, a, b, stats, every, history, history_std,
              recorded):
    """Advance the estimate over the samples of ``regressor`` (k, m, r) and ``target`` (k, m)
    (see module). Every ``every``-th sample seen (counting all
    calls: ``stats[2]``), when ``every`` > 0, writes ``theta`` and its std into row
    ``recorded[0]`` of ``history`` / ``history_std`` (NaN before initialisation) and advances
    ``recorded[0]``. Returns the samples at which it was not yet initialised."""
    k_count, m, r = regressor.shape
    pending = 0
    for k in range(k_count):
        y = regressor[k]
        z = target[k]
        if stats[3] == 0.0:
            for i in range(r):
                b[i] = lam * b[i]
                for j in range(r):
                    a[i, j] = lam * a[i, j]
            stats[4] *= lam
            for row in range(m):
                for i in range(r):
                    b[i] += y[row, i] * z[row]
                    for j in range(r):
                        a[i, j] += y[row, i] * y[row, j]
                stats[4] += z[row] * z[row]
            stats[1] = lam * stats[1] + m
            if stats[1] >= r:  # enough rows for a full rank
                _try_start(a, b, stats[4], theta, p, stats)
            if stats[3] == 0.0:
                pending += 1
        else:
            factor = lam
            if stats[5] > 0.0:
                factor = min(1.0, max(lam, np.trace(p) / stats[5]))
            error = z - y @ theta
            pyt = p @ y.T  # (r, m)
            s = y @ pyt
            for i in range(m):
                s[i, i] += factor
            gain = np.linalg.solve(s, pyt.T).T  # (r, m) = P Y^T S^-1
            theta += gain @ error
            stats[0] = factor * stats[0] + factor * np.dot(error, np.linalg.solve(s, error))
            stats[1] = factor * stats[1] + m
            p -= gain @ pyt.T
            for i in range(r):
                for j in range(i):
                    mean = 0.5 * (p[i, j] + p[j, i])
                    p[i, j] = mean / factor
                    p[j, i] = mean / factor
                p[i, i] = p[i, i] / factor
        stats[2] += 1.0
        if every > 0 and int(stats[2]) % every == 0 and recorded[0] < history.shape[0]:
            row = recorded[0]
            if stats[3] == 0.0:
                history[row, :] = np.nan
                history_std[row, :] = np.nan
            else:
                scale = stats[0] / (stats[1] - r) if stats[1] > r else 1.0
                for i in range(r):
                    history[row, i] = theta[i]
                    history_std[row, i] = np.sqrt(max(scale * p[i, i], 0.0))
            recorded[0] += 1
    return pending
