"""Linear estimators of base parameters, with the scikit-learn estimator contract.

``OLS().fit(W, tau)``: ordinary least squares by SVD (pseudo-inverse) on a stacked regressor
``W`` (m, p) or ``(N, n, p)`` and torques ``(m,)`` or ``(N, n)``. Learned attributes end in ``_``:

- ``coef_`` the estimate; ``covariance_ = sigma2_ (W^T W)^-1`` with
  ``sigma2_ = |tau - W coef_|^2 / (m - rank)``; ``std_`` and ``relative_std_percent_``
  (``100 std / |coef|``);
- ``rank_``, ``singular_`` (singular values of W), ``condition_number_`` (inf when W is rank
  deficient; reduce to base parameters first);
- ``residuals_`` (m,), ``relative_error_percent_ = 100 |tau - W coef_| / |tau|``.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = ["OLS", "RankDeficiencyWarning"]


class RankDeficiencyWarning(RuntimeWarning):
    """The regressor does not determine every coefficient (reduce to base parameters)."""


def _stack(regressor: ArrayLike, torque: ArrayLike) -> tuple[NDArray, NDArray]:
    w = as_float_array("regressor", regressor)
    y = as_float_array("torque", torque)
    if w.ndim == 3:
        w = w.reshape(-1, w.shape[-1])
    if w.ndim != 2:
        raise ValueError(f"`regressor` must be (m, p) or (N, n, p), got shape {w.shape}")
    y = y.reshape(-1)
    if y.size != w.shape[0]:
        raise ValueError(
            f"`torque` must hold one value per regressor row ({w.shape[0]}), got {y.size}"
        )
    return w, y


class OLS:
    """Ordinary least squares, ``coef_ = pinv(W) tau``."""

    def fit(self, regressor: ArrayLike, torque: ArrayLike) -> OLS:
        w, y = _stack(regressor, torque)
        m, p = w.shape
        if m <= p:
            raise ValueError(f"`regressor` needs more rows than columns, got {m} x {p}")
        u, singular, vt = np.linalg.svd(w, full_matrices=False)
        rank = int((singular > max(m, p) * np.finfo(float).eps * singular[0]).sum())
        if rank < p:
            warnings.warn(
                f"regressor is rank deficient ({rank} < {p} columns): reduce it to base "
                "parameters first; the estimate is the minimum-norm solution",
                RankDeficiencyWarning, stacklevel=2,
            )
        inverse = np.where(np.arange(p) < rank, 1.0 / np.where(singular > 0, singular, 1.0), 0.0)
        coef = vt.T @ (inverse * (u.T @ y))
        residuals = y - w @ coef
        sigma2 = float(residuals @ residuals) / (m - rank)
        covariance = sigma2 * (vt.T * inverse**2) @ vt
        std = np.sqrt(np.diag(covariance))
        with np.errstate(divide="ignore"):
            relative = np.where(coef != 0, 100.0 * std / np.abs(coef), np.inf)
        self.coef_ = coef
        self.covariance_ = covariance
        self.sigma2_ = sigma2
        self.std_ = std
        self.relative_std_percent_ = relative
        self.singular_ = singular
        self.rank_ = rank
        self.condition_number_ = float(singular[0] / singular[-1]) if rank == p else np.inf
        self.residuals_ = residuals
        self.relative_error_percent_ = float(100.0 * np.linalg.norm(residuals) / np.linalg.norm(y))
        return self

    def predict(self, regressor: ArrayLike) -> NDArray:
        """``W coef_`` with W ``(..., p)`` -> ``(...)``."""
        if not hasattr(self, "coef_"):
            raise RuntimeError("OLS is not fitted: call fit(regressor, torque) first")
        w = as_float_array("regressor", regressor)
        if w.shape[-1:] != self.coef_.shape:
            raise ValueError(f"`regressor` must have {self.coef_.size} columns, got {w.shape}")
        return w @ self.coef_
