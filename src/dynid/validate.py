"""Validation metrics of predicted against measured joint torques, per joint."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = ["mae", "relative_error_percent", "rmse"]


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


def relative_error_percent(measured: ArrayLike, predicted: ArrayLike) -> float:
    """``100 |tau - tau_hat| / |tau|`` over all samples and joints (Frobenius norms)."""
    y, y_hat = _pair(measured, predicted)
    return float(100.0 * np.linalg.norm(y - y_hat) / np.linalg.norm(y))
