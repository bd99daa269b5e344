"""The recursive least-squares step, compiled: one block of samples per call, one sample after
another inside (the recursion is sequential; the block's regressor is built batched before).

Each sample k brings m rows ``y_k = Y_k theta + e`` (``Y_k`` (m, r)), already weighted. With
forgetting factor ``lam`` the estimate minimises ``sum_i lam^(k-i) |y_i - Y_i theta|^2``.
Both phases work on square roots, never on a product of the regressor with itself:

- *before* the estimate exists, the rows are folded (Givens rotations) into the upper
  triangular factor ``R`` of the information matrix (``R^T R = A = sum lam^(k-i) Y_i^T Y_i``)
  and ``d = Q^T y`` (``R^T d = b = sum lam^(k-i) Y_i^T y_i``). The start is accepted when
  every pivot keeps more than ``PIVOT_RTOL`` of its column's own weight
  (``R_jj^2 > PIVOT_RTOL |R_{:j, j}|^2``: the column's angle to the span of the others,
  independent of the units of theta). Then ``S = R^-1`` (``P = S S^T = A^-1``) and
  ``theta = S d``: the exact least-squares start, computed as by QR (error ~ eps cond(Y), not
  the eps cond(Y)^2 of the normal equations).
- *after*, the square-root covariance form (Potter), one row at a time (the rows are weighted
  to unit noise, so the rows of a sample may be taken one after another): with
  ``phi = S^T y``, ``s = 1 + |phi|^2``, ``theta += S phi e / s`` and
  ``S <- S (I - gamma phi phi^T)``, ``gamma = (1/s) / (1 + sqrt(1/s))``. ``P`` stays
  symmetric and positive semi-definite by construction, and the rounding of ``P`` is that of
  ``S`` (eps cond(Y)) — the covariance form ``P <- P - K Y P`` loses eps cond(Y)^2 at every
  step, which a start on a barely determined ``A`` (cond ~1e7) made a permanent bias of
  1e-3 relative to the batch fit (arm3, arctan friction). The anti-windup guard:
  ``lam' = max(lam, trace(P) / max_trace)`` capped at 1 (``trace(P) = |S|_F^2``), so
  forgetting never lifts ``trace(P / lam')`` above ``max_trace``; ``S`` is divided by
  ``sqrt(lam')`` before the sample's rows.

``p`` holds ``S`` once started; ``a`` and ``b`` hold ``R`` and ``d`` before.
``stats`` carries ``[J, N_eff, samples, initialised, yy, max_trace]``: the weighted residual
sum of squares of the current estimate (``J <- lam' J + sum_rows e^2 / s``, the exact
recursion of the cost's minimum), the effective row count (``N_eff <- lam' N_eff + m``), the
samples seen, 1.0 once initialised, ``sum lam^(k-i) |y_i|^2`` (to start ``J`` at
initialisation), and the guard's bound: > 0 the bound, 0 no guard, < 0 ``trace(P)`` at
initialisation (set then).
"""

from __future__ import annotations

import numpy as np

from dynid._jit import kernel

# a pivot must keep this fraction of its column's weight (an angle of 1e-5 rad)
PIVOT_RTOL = 1e-10


@kernel
def _fold_row(a, b, row, target):
    """Fold one row ``row`` (r,) with its ``target`` into ``R = a`` (upper triangular) and
    ``d = b`` by Givens rotations (``row`` is overwritten)."""
    r = a.shape[0]
    z = target
    for j in range(r):
        w = row[j]
        if w == 0.0:
            continue
        rho = np.hypot(a[j, j], w)
        c = a[j, j] / rho
        s = w / rho
        a[j, j] = rho
        for col in range(j + 1, r):
            upper = a[j, col]
            a[j, col] = c * upper + s * row[col]
            row[col] = c * row[col] - s * upper
        upper = b[j]
        b[j] = c * upper + s * z
        z = c * z - s * upper


@kernel
def _try_start(a, b, yy, theta, p, stats):
    """``S = R^-1``, ``theta = S d`` when ``R`` is numerically nonsingular (see module); True
    on success."""
    r = a.shape[0]
    for j in range(r):
        weight = 0.0
        for i in range(j + 1):
            weight += a[i, j] * a[i, j]
        if not weight > 0.0 or not a[j, j] * a[j, j] > PIVOT_RTOL * weight:
            return False
    # S = R^-1, upper triangular, column by column (back substitution)
    p[:, :] = 0.0
    for j in range(r):
        p[j, j] = 1.0 / a[j, j]
        for i in range(j - 1, -1, -1):
            total = 0.0
            for c in range(i + 1, j + 1):
                total += a[i, c] * p[c, j]
            p[i, j] = -total / a[i, i]
    theta[:] = p @ b
    stats[0] = max(yy - np.dot(b, b), 0.0)
    stats[3] = 1.0
    if stats[5] < 0.0:
        stats[5] = np.sum(p * p)
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
    row = np.empty(r)
    phi = np.empty(r)
    gain = np.empty(r)
    for k in range(k_count):
        y = regressor[k]
        z = target[k]
        if stats[3] == 0.0:
            root = np.sqrt(lam)
            for i in range(r):
                b[i] = root * b[i]
                for j in range(i, r):
                    a[i, j] = root * a[i, j]
            stats[4] *= lam
            for i in range(m):
                row[:] = y[i]
                _fold_row(a, b, row, z[i])
                stats[4] += z[i] * z[i]
            stats[1] = lam * stats[1] + m
            if stats[1] >= r:  # enough rows for a full rank
                _try_start(a, b, stats[4], theta, p, stats)
            if stats[3] == 0.0:
                pending += 1
        else:
            factor = lam
            if stats[5] > 0.0 and lam < 1.0:  # (lam = 1: the guard cannot act)
                trace = 0.0
                for c in range(r):
                    for j in range(r):
                        trace += p[c, j] * p[c, j]
                factor = min(1.0, max(lam, trace / stats[5]))
            if factor != 1.0:
                root = 1.0 / np.sqrt(factor)
                for c in range(r):
                    for j in range(r):
                        p[c, j] *= root
            cost = 0.0
            for i in range(m):
                error = z[i] - np.dot(y[i], theta)
                phi[:] = y[i] @ p  # S^T y
                gain[:] = p @ phi  # S S^T y = P y
                s = 1.0 + np.dot(phi, phi)
                theta += gain * (error / s)
                cost += error * error / s
                gamma = (1.0 / s) / (1.0 + np.sqrt(1.0 / s))
                for c in range(r):
                    for j in range(r):
                        p[c, j] -= gamma * gain[c] * phi[j]
            stats[0] = factor * stats[0] + cost
            stats[1] = factor * stats[1] + m
        stats[2] += 1.0
        if every > 0 and int(stats[2]) % every == 0 and recorded[0] < history.shape[0]:
            row_index = recorded[0]
            if stats[3] == 0.0:
                history[row_index, :] = np.nan
                history_std[row_index, :] = np.nan
            else:
                scale = stats[0] / (stats[1] - r) if stats[1] > r else 1.0
                for i in range(r):
                    variance = 0.0
                    for j in range(r):
                        variance += p[i, j] * p[i, j]
                    history[row_index, i] = theta[i]
                    history_std[row_index, i] = np.sqrt(max(scale * variance, 0.0))
            recorded[0] += 1
    return pending
