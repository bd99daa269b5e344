"""Error metrics of predicted against measured joint torques, per joint: RMSE, MAE, relative
error %, the w and w_r of the Jaco2 paper (eq. 9), and residual statistics."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = ["mae", "relative_error_percent", "residual_statistics", "rmse", "w_errors"]


def _pair(measured: ArrayLike, predicted: ArrayLike) -> tuple[NDArray, NDArray]:
    y = as_float_array("measured", measured)
    y_hat = as_float_array("predicted", predicted)
    if y.shape != y_hat.shape or y.ndim != 2:
        raise ValueError(
            f"`measured` and `predicted` must both be (N, n), got {y.shape} and {y_hat.shape}"
        )
    return y, y_hat


def rmse(measured: ArrayLike, predicted: ArrayLike) -> NDArray:
    """Root-mean-square error per joint ``(n,)`` (Gilbert et al. 2024, eq. 32)."""
    y, y_hat = _pair(measured, predicted)
    return np.sqrt(np.mean((y - y_hat) ** 2, axis=0))


def mae(measured: ArrayLike, predicted: ArrayLike) -> NDArray:
    """Mean absolute error per joint ``(n,)``."""
    y, y_hat = _pair(measured, predicted)
    return np.mean(np.abs(y - y_hat), axis=0)


def _norm_of_measured(y: NDArray) -> float:
    norm = float(np.linalg.norm(y))
    if norm == 0:
        raise ValueError("`measured` is zero on every sample and joint: a relative error "
                         "needs torque")
    return norm


def relative_error_percent(measured: ArrayLike, predicted: ArrayLike) -> float:
    """``100 |tau - tau_hat| / |tau|`` over all samples and joints (Frobenius norms); a
    ValueError for a zero ``measured``."""
    y, y_hat = _pair(measured, predicted)
    return float(100.0 * np.linalg.norm(y - y_hat) / _norm_of_measured(y))


def w_errors(measured: ArrayLike, predicted: ArrayLike) -> tuple[float, float]:
    """The Jaco2 paper's eq. 9 over all joints: ``w = |e|_2 / N`` [N m] (N samples) and
    ``w_r = |e|_2 / |tau|_2``, with ``e = tau - tau^`` stacked over samples and joints (a
    ValueError for a zero ``measured``)."""
    y, y_hat = _pair(measured, predicted)
    error = float(np.linalg.norm(y - y_hat))
    return error / y.shape[0], error / _norm_of_measured(y)


def residual_statistics(measured: ArrayLike, predicted: ArrayLike) -> dict:
    """Per joint: mean (bias), standard deviation, largest magnitude, 95th percentile of the
    magnitude, and the lag-one autocorrelation of ``tau - tau^`` (near 0 for white residuals,
    near 1 where the model misses a slow effect)."""
    y, y_hat = _pair(measured, predicted)
    e = y - y_hat
    centred = e - e.mean(axis=0)
    power = np.sum(centred**2, axis=0)
    lag = np.sum(centred[1:] * centred[:-1], axis=0)
    return {"mean": e.mean(axis=0), "std": e.std(axis=0), "max_abs": np.abs(e).max(axis=0),
            "p95_abs": np.percentile(np.abs(e), 95, axis=0),
            "lag1_autocorrelation": np.where(power > 0, lag / np.where(power > 0, power, 1),
                                             0.0)}
